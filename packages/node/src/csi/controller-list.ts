// ListVolumes of the node-controller service: the persistent volumes of this node that have both a
// record and a device (a record without a device is a create in flight), sorted by id, in pages.
// The page token is the id of the last volume of the previous page, so deleting or adding volumes
// between pages never skips or repeats one; a token we did not make → ABORTED, as the spec says.
import { AbortedError, InvalidArgumentError, type csi } from '@pmem-csi/runtime';
import { SAFE_VOLUME_ID } from '../state/volume-record.js';
import type { NodeServiceDeps } from './deps.js';
import { csiVolume } from './volumes.js';

const TOKEN_PREFIX = 'after:';

function tokenStart(token: string): string | undefined {
  if (token === '') return undefined;
  const id = token.startsWith(TOKEN_PREFIX) ? token.slice(TOKEN_PREFIX.length) : '';
  if (!SAFE_VOLUME_ID.test(id)) throw new AbortedError(`starting_token ${JSON.stringify(token)} is not a token of this node's ListVolumes; start again without a token`);
  return id;
}

/** ListVolumes with pagination. */
export async function listVolumesRpc(deps: NodeServiceDeps, req: csi.ListVolumesRequest__Output): Promise<csi.ListVolumesResponse> {
  if (req.max_entries < 0) throw new InvalidArgumentError(`max_entries must not be negative, got ${req.max_entries}`);
  const after = tokenStart(req.starting_token);
  const devices = new Map((await deps.dm.listDevices()).map((d) => [d.volumeId, d]));
  const records = (await deps.state.list()).filter(
    (r) => r.ephemeral !== true && r.deviceMode === deps.dm.mode && devices.has(r.volumeId) && (after === undefined || r.volumeId > after),
  );
  const page = req.max_entries > 0 ? records.slice(0, req.max_entries) : records;
  const entries = page.map((record) => ({ volume: csiVolume(deps, { record, device: devices.get(record.volumeId)! }) }));
  const last = page.at(-1);
  const more = last !== undefined && page.length < records.length;
  return { entries, next_token: more ? `${TOKEN_PREFIX}${last.volumeId}` : '' };
}
