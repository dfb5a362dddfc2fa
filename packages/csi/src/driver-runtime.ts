// The Node.js/V8 settings of pmem-csi-driver's process, per mode, defined once: the operator's
// builders put them into the driver container's NODE_OPTIONS (the controller Deployment and the
// node DaemonSet run the same image and entrypoint; the pod knows its mode, the image does not),
// the local stack passes them on the command line of every driver it starts, and the benchmarks
// start the driver with them (e2e/src/bench). Only options Node.js accepts in NODE_OPTIONS belong
// here (packages/driver/src/driver-runtime.test.ts runs the pinned Node with each mode's value).
import type { DriverMode } from './driver-flags.js';

/**
 * V8 heap limits by mode.
 *
 * node: a daemon on every PMEM node, whose live heap is small (~0.5 KiB per volume: 10,000 volumes
 * are 5 MiB) while V8 sizes its heap by the machine's memory: the old generation grows to hundreds
 * of MiB before a full collection, the young generation to 32 MiB under load. A small old space
 * limit makes V8 collect early and grow the heap by its smallest factor; `--max-semi-space-size=2`
 * bounds the young generation to a few MiB.
 * Measured on a busy 2-core machine (bundle, fake devices, 300 + 6 s of Create+Delete pairs at
 * c=32 over mutual TLS): RSS after load 260 MiB with the defaults, 157 with the semi-space alone,
 * 110 with both; idle 77 (48 of them the node binary's file-backed pages). A node that outgrows
 * 64 MiB of old generation stops with "JavaScript heap out of memory" and its pod restarts.
 *
 * controller: its live heap grows with the cluster (registrations, volumes, one HTTP/2 session
 * per node), so it gets no old-generation limit — a limit sized for one cluster would stop a
 * larger one with "JavaScript heap out of memory". Its young generation, though, is sized by
 * throughput, not by the cluster: under CreateVolume load V8 grows each semi-space to its default
 * maximum (64 MiB here, 128 MiB of new space) and keeps it. `--max-semi-space-size=4` bounds the
 * new space to 8-12 MiB; the cost is more frequent scavenges of a smaller space. Measurements:
 * e2e/bench/README.md ("Controller memory: the young generation").
 */
export const DRIVER_V8_OPTIONS: Readonly<Record<DriverMode, readonly string[]>> = {
  node: ['--max-semi-space-size=2', '--max-old-space-size=64'],
  controller: ['--max-semi-space-size=4'],
};

/** The NODE_OPTIONS value of a driver container in `mode` ('' when the mode has none). */
export function driverNodeOptions(mode: DriverMode): string {
  return DRIVER_V8_OPTIONS[mode].join(' ');
}
