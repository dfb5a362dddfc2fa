// ListVolumes of the node-controller service: the persistent volumes of this node that have both a
// record and a device (a record without a device is a create in flight), sorted by id, in pages.
// The page token is the id of the last volume of the previous page, so deleting or adding volumes
// between pages never skips or repeats one; a token we did not make → ABORTED, as the spec says.
import { AbortedError, InvalidArgumentError, type csi, type registry } from '@pmem-csi/csi';
import { SAFE_VOLUME_ID } from '../state/volume-record.js';
import type { NodeServiceDeps } from '../volumes/deps.js';
import { csiVolume } from '../volumes/volumes.js';

const TOKEN_PREFIX = 'after:';

function tokenStart(token: string): string | undefined {
  if (token === '') return undefined;
  const id = token.startsWith(TOKEN_PREFIX) ? token.slice(TOKEN_PREFIX.length) : '';
  if (!SAFE_VOLUME_ID.test(id))
    throw new AbortedError(
      `starting_token ${JSON.stringify(token)} is not a token of this node's ListVolumes; start again without a token`,
    );
  return id;
}

/** The persistent volumes ListVolumes reports (record and device), sorted by id, those after `after` only. */
async function listed(deps: NodeServiceDeps, after?: string): Promise<csi.Volume[]> {
  const devices = new Map((await deps.dm.listDevices()).map((d) => [d.volumeId, d]));
  const records = (await deps.state.list()).filter(
    (r) =>
      r.ephemeral !== true &&
      r.deviceMode === deps.dm.mode &&
      devices.has(r.volumeId) &&
      (after === undefined || r.volumeId > after),
  );
  return records.map((record) => csiVolume(deps, { record, device: devices.get(record.volumeId)! }));
}

/**
 * The volumes a registration carries (registry.proto VolumeInventory): exactly what ListVolumes
 * would report, all pages, so the controller need not dial back to list them.
 */
export async function volumeInventory(deps: NodeServiceDeps): Promise<registry.InventoryVolume[]> {
  return (await listed(deps)).map((v) => ({
    volume_id: v.volume_id,
    capacity_bytes: v.capacity_bytes,
    volume_context: v.volume_context,
  }));
}

/** ListVolumes with pagination. */
export async function listVolumesRpc(
  deps: NodeServiceDeps,
  req: csi.ListVolumesRequest__Output,
): Promise<csi.ListVolumesResponse> {
  if (req.max_entries < 0) throw new InvalidArgumentError(`max_entries must not be negative, got ${req.max_entries}`);
  const after = tokenStart(req.starting_token);
  const volumes = await listed(deps, after);
  const page = req.max_entries > 0 ? volumes.slice(0, req.max_entries) : volumes;
  const entries = page.map((volume) => ({ volume }));
  const last = page.at(-1);
  const more = last !== undefined && page.length < volumes.length;
  return { entries, next_token: more ? `${TOKEN_PREFIX}${last.volume_id ?? ''}` : '' };
}
