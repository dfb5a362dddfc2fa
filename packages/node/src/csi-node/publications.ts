// Access modes that limit how often a volume is published on this node (CSI NodePublishVolume, the
// table for plugins with SINGLE_NODE_MULTI_WRITER). SINGLE_NODE_SINGLE_WRITER: one target_path;
// a second one is FAILED_PRECONDITION naming the first (the same target again stays idempotent).
// SINGLE_NODE_MULTI_WRITER: any number. SINGLE_NODE_WRITER: any number too, although the spec's
// table lists it with the single-target modes — COs older than SINGLE_NODE_MULTI_WRITER (and
// Kubernetes for ReadWriteOnce without it) send it for every pod on the node that shares a volume,
// and the spec says plugins MUST keep accepting it so that those COs continue working.
// SINGLE_NODE_READER_ONLY: any number, each mounted read-only even when `readonly` is false (the
// capability says the CO only reads; read-only is how the node keeps it to that).
//
// Where the volume is published is read from the mount table, not remembered: every mount of the
// volume's filesystem other than its staging path (or, for raw block, every bind of its device
// node). The mount table is the one record that is always right — it survives a restart of the
// driver (the kubelet restarts it while pods keep their mounts), it is empty after a reboot exactly
// when the publications are gone, and it sees a target the kubelet cleaned up by itself, none of
// which a record in the node state would without reconciling it against the mount table anyway.
// What it cannot tell is the access mode of an earlier publication: a multi-writer publish next to
// a single-writer one is not refused (the spec's SHOULD for a changed capability); COs derive the
// mode from the volume (Kubernetes: from the PV's access modes), so all publications of a volume
// carry the same one.
import { realpath } from 'node:fs/promises';
import { basename } from 'node:path';
import type { CallContext } from '@pmem-csi/runtime';
import { FailedPreconditionError } from '@pmem-csi/csi';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { isWholeFilesystem, listMounts, sourceDevice, type MountEntry } from '../mount/findmnt.js';
import { sameBlockDevice } from '../mount/targets.js';
import type { AccessMode } from './access-request.js';
import type { NodeServiceDeps } from '../volumes/deps.js';

/** Access modes that allow only one target_path per node. */
const ONE_TARGET: ReadonlySet<AccessMode> = new Set<AccessMode>(['SINGLE_NODE_SINGLE_WRITER']);

/** Whether `mode` asks for read-only publications whatever the `readonly` flag says. */
export function readOnlyByMode(mode: AccessMode): boolean {
  return mode === 'SINGLE_NODE_READER_ONLY';
}

/** Whether `mode` allows only one target_path per node. */
export function oneTargetOnly(mode: AccessMode): boolean {
  return ONE_TARGET.has(mode);
}

/** The device node's name below /dev as a devtmpfs bind source shows it ("/loop3" for /dev/loop3, through symlinks). */
async function devtmpfsRoot(device: PmemDeviceInfo): Promise<string> {
  const real = await realpath(device.path).catch(() => device.path);
  return `/${basename(real)}`;
}

/** Whether `entry` mounts the volume: its filesystem (filesystem volumes) or a bind of its device node (raw block). */
async function showsVolume(entry: MountEntry, device: PmemDeviceInfo, blockRoot: string | undefined): Promise<boolean> {
  if (blockRoot === undefined) {
    const source = sourceDevice(entry.source);
    // Only device nodes are stat()ed here, never mount points: one of a dead NFS server would hang.
    return (
      source?.startsWith('/dev/') === true && isWholeFilesystem(entry) && (await sameBlockDevice(source, device.path))
    );
  }
  // The bind of a device node reads "devtmpfs[/loop3]"; the target is stat()ed only then.
  return entry.source.endsWith(`[${blockRoot}]`) && (await sameBlockDevice(entry.target, device.path));
}

export interface Publication {
  readonly volumeId: string;
  readonly device: PmemDeviceInfo;
  readonly block: boolean;
  readonly target: string;
  /** Mounts of the volume that are not publications (its staging path). */
  readonly notPublications: readonly string[];
  readonly mode: AccessMode;
}

/** Where the volume is mounted now besides `p.target` and `p.notPublications`, in mount order. */
export async function otherPublications(
  deps: Pick<NodeServiceDeps, 'runner'>,
  p: Publication,
  ctx: Pick<CallContext, 'signal'>,
): Promise<string[]> {
  const skip = new Set([p.target, ...p.notPublications]);
  for (const path of p.notPublications) skip.add(await realpath(path).catch(() => path));
  const blockRoot = p.block ? await devtmpfsRoot(p.device) : undefined;
  const found: string[] = [];
  for (const entry of await listMounts(deps.runner, ctx)) {
    if (skip.has(entry.target) || found.includes(entry.target)) continue;
    if (await showsVolume(entry, p.device, blockRoot)) found.push(entry.target);
  }
  return found;
}

/**
 * Refuse a publication at a new target when the access mode allows one target per node and the
 * volume is published elsewhere. @throws FailedPreconditionError naming the first target and the mode
 */
export async function checkTargetLimit(
  deps: Pick<NodeServiceDeps, 'runner'>,
  p: Publication,
  ctx: Pick<CallContext, 'signal'>,
): Promise<void> {
  if (!oneTargetOnly(p.mode)) return;
  const [first] = await otherPublications(deps, p, ctx);
  if (first === undefined) return;
  throw new FailedPreconditionError(
    `volume ${p.volumeId} is already published at ${first}; its access mode ${p.mode} allows one target_path per node, so it cannot also be published at ${p.target} (unpublish it there first)`,
  );
}
