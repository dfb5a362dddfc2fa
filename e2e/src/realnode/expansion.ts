// What the real node's volume-expansion scenarios (issue 25) share: the claim as they read it, the
// script of a pod that watches its filesystem grow (and reports through its termination message,
// like every script pod here: no exec), and whether this machine lets a node driver grow a mounted
// ext4 filesystem at all.
import { readFileSync } from 'node:fs';
import { parseQuantityBytes } from '@pmem-csi/api';
import type { KubeObject } from '../cluster/kube.js';

/** A PersistentVolumeClaim with the status fields that expansion changes. */
export interface ExpandingClaim extends KubeObject {
  spec: { volumeName?: string; resources?: { requests?: { storage?: string } } };
  status?: {
    phase?: string;
    capacity?: { storage?: string };
    conditions?: Array<{ type: string; status: string; message?: string }>;
    /** RecoverVolumeExpansionFailure (beta, on in 1.33): ControllerResizeInProgress, NodeResizePending, ... */
    allocatedResourceStatuses?: Record<string, string>;
  };
}

/** Bytes of a quantity such as "128Mi" (NaN when absent or not a quantity). */
export function quantityBytes(q: string | undefined): number {
  const r = parseQuantityBytes(q ?? '');
  return r.ok ? r.value : Number.NaN;
}

/** One line about a claim for wait messages: spec size, status size, resize status, conditions. */
export function describeClaim(c: ExpandingClaim | undefined): string {
  if (c === undefined) return 'claim absent';
  const conditions = (c.status?.conditions ?? []).map((x) => `${x.type}=${x.status}`).join(',') || 'none';
  return (
    `claim ${c.metadata.name}: requested ${c.spec.resources?.requests?.storage ?? '?'}, ` +
    `status.capacity ${c.status?.capacity?.storage ?? '-'}, resize ${c.status?.allocatedResourceStatuses?.['storage'] ?? '-'}, ` +
    `conditions ${conditions}`
  );
}

const KIB = "df -P /data | tail -1 | awk '{print $2}'";
/** Polls of the watcher (every 0.2 s): 300 s. */
const WATCH_POLLS = 1500;

/**
 * The script of a pod that mounts the claim at /data: writes `token` to /data/f, notes the size of
 * its filesystem (df, KiB), creates /tmp/written (its readiness), then checks every 0.2 s until the
 * filesystem is larger or /data/stop exists (another pod's signal), for at most 300 s. It then checks
 * that /data/f still holds the token; if the filesystem grew, it writes `fillMiB` MiB (more than the
 * old filesystem could hold: the new space is usable). It reports "<KiB before> <KiB now>".
 */
export function growWatcherScript(token: string, fillMiB: number): string {
  return [
    `kib() { ${KIB}; }`,
    `echo ${token} > /data/f; sync; before=$(kib); touch /tmp/written; n=0`,
    'while [ "$(kib)" -le "$before" ] && [ ! -e /data/stop ]; do',
    `  n=$((n+1)); if [ "$n" -ge ${WATCH_POLLS} ]; then echo "the filesystem stayed at $before KiB for 300 s" > /dev/termination-log; exit 1; fi`,
    '  sleep 0.2',
    'done',
    `if [ "$(cat /data/f)" != ${token} ]; then echo "/data/f changed: $(cat /data/f)" > /dev/termination-log; exit 1; fi`,
    'now=$(kib)',
    `if [ "$now" -gt "$before" ]; then dd if=/dev/zero of=/data/fill bs=1M count=${fillMiB} conv=fsync status=none; fi`,
    'echo "$before $now" > /dev/termination-log',
  ].join('\n');
}

/**
 * The script of a pod that mounts the claim at /data after it grew while no pod used it: checks that
 * /data/f still holds `token`, writes `fillMiB` MiB (more than the old filesystem could hold) and
 * reports the size of its filesystem (df, KiB).
 */
export function afterGrowthScript(token: string, fillMiB: number): string {
  return [
    `if [ "$(cat /data/f)" != ${token} ]; then echo "/data/f changed: $(cat /data/f)" > /dev/termination-log; exit 1; fi`,
    `dd if=/dev/zero of=/data/fill bs=1M count=${fillMiB} conv=fsync status=none`,
    `${KIB} > /dev/termination-log`,
  ].join('\n');
}

/** "<KiB before> <KiB now>" of growWatcherScript as numbers. */
export function watcherSizes(message: string): [number, number] {
  const [before = Number.NaN, now = Number.NaN] = message.split(' ').map(Number);
  return [before, now];
}

/** Capability number of CAP_SYS_RESOURCE (linux/capability.h). */
export const CAP_SYS_RESOURCE = 24;

/**
 * Whether capability `cap` is in this process's bounding set. The real node's containerd and every
 * container it starts, privileged ones included, inherit this machine's bounding set: a capability
 * missing here is missing in the node driver too. Growing a mounted ext4 filesystem (resize2fs,
 * EXT4_IOC_RESIZE_FS) needs CAP_SYS_RESOURCE; sandboxes such as this CI VM drop it.
 */
export function inBoundingSet(cap: number, statusText = readFileSync('/proc/self/status', 'utf8')): boolean {
  const hex = /^CapBnd:\s*([0-9a-fA-F]+)\s*$/m.exec(statusText)?.[1];
  if (hex === undefined) throw new Error('/proc/self/status has no CapBnd line');
  return ((BigInt(`0x${hex}`) >> BigInt(cap)) & 1n) === 1n;
}

/** The node driver's words when it cannot grow a mounted ext4 filesystem (packages/node node-expand.ts). */
export const EXT4_NEEDS_SYS_RESOURCE = 'growing a mounted ext4 filesystem needs CAP_SYS_RESOURCE';
