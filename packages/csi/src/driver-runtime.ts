// The Node.js/V8 settings of pmem-csi-driver's process, per mode, defined once: the operator's
// builders put them into the driver container's NODE_OPTIONS (the controller Deployment and the
// node DaemonSet run the same image and entrypoint; the pod knows its mode, the image does not),
// the local stack passes them on the command line of every driver it starts, and the benchmarks
// start the driver with them (e2e/src/bench). Only options Node.js accepts in NODE_OPTIONS belong
// here (packages/driver/src/driver-runtime.test.ts runs the pinned Node with each mode's value); V8
// flags Node.js refuses there the driver sets on itself by its --mode (packages/driver/src/v8-mode-flags.ts).
import type { DriverMode } from './driver-flags.js';

/**
 * V8 heap limits by mode.
 *
 * node: a daemon on every PMEM node, whose live heap is small (it grows with the volumes, a few
 * hundred bytes each) while V8 sizes its heap by the machine's memory: the old generation grows far
 * beyond the live heap before a full collection, and the young generation grows under load. A small
 * old space limit makes V8 collect early and grow the heap by its smallest factor;
 * `--max-semi-space-size=2` bounds the young generation to a few MiB. Each limit lowers the node's
 * RSS after load (measured: e2e/bench/README.md, "Figures from the code's comments"). A node that
 * outgrows 64 MiB of old generation stops with "JavaScript heap out of memory" and its pod restarts.
 *
 * controller: its live heap grows with the cluster (registrations, volumes, one HTTP/2 session
 * per node), so it gets no old-generation limit — a limit sized for one cluster would stop a
 * larger one with "JavaScript heap out of memory". Its young generation, though, is sized by
 * throughput, not by the cluster: under CreateVolume load V8 grows each semi-space to its default
 * maximum (which depends on the machine) and keeps it. `--max-semi-space-size=4` bounds the new
 * space to a few semi-spaces of 4 MiB; the cost is more frequent scavenges of a smaller space.
 * Measurements: e2e/bench/README.md ("Figures from the code's comments").
 */
export const DRIVER_V8_OPTIONS: Readonly<Record<DriverMode, readonly string[]>> = {
  node: ['--max-semi-space-size=2', '--max-old-space-size=64'],
  controller: ['--max-semi-space-size=4'],
};

/** The NODE_OPTIONS value of a driver container in `mode` ('' when the mode has none). */
export function driverNodeOptions(mode: DriverMode): string {
  return DRIVER_V8_OPTIONS[mode].join(' ');
}
