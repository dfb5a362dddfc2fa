// ListVolumes with pagination. The order is the sorted volume id, and a token means "continue
// after this id", so pages stay consistent while volumes come and go (a deleted last entry does
// not invalidate the token, a new volume shows up in its place in the order). Tokens are opaque
// (base64url of a versioned string); one we did not issue is ABORTED, as the CSI spec asks.
import { AbortedError, type csi, InvalidArgumentError } from '@pmem-csi/csi';
import { toCsiVolume, volumeCondition, type ControllerDeps } from './controller-deps.js';

const TOKEN_PREFIX = 'after:';

/** The token that continues a listing after `volumeId`. */
export function encodeToken(volumeId: string): string {
  return Buffer.from(`${TOKEN_PREFIX}${volumeId}`, 'utf8').toString('base64url');
}

/** The volume id a token continues after. @throws AbortedError for tokens we did not issue */
export function decodeToken(token: string): string {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  if (!text.startsWith(TOKEN_PREFIX) || encodeToken(text.slice(TOKEN_PREFIX.length)) !== token) {
    throw new AbortedError(`starting_token ${JSON.stringify(token)} is not valid; list again without a token`);
  }
  return text.slice(TOKEN_PREFIX.length);
}

/** One page of volumes. */
export function listVolumes(deps: ControllerDeps, req: csi.ListVolumesRequest__Output): csi.ListVolumesResponse {
  if (req.max_entries < 0) throw new InvalidArgumentError(`max_entries must not be negative, got ${req.max_entries}`);
  const after = req.starting_token === '' ? undefined : decodeToken(req.starting_token);
  const all = deps.index.list();
  const start = after === undefined ? 0 : all.findIndex((r) => r.volumeId > after);
  const rest = start < 0 ? [] : all.slice(start);
  const page = req.max_entries > 0 ? rest.slice(0, req.max_entries) : rest;
  const last = page.at(-1);
  return {
    entries: page.map((rec) => ({
      volume: toCsiVolume(deps, rec),
      status: { published_node_ids: [], volume_condition: volumeCondition(deps, rec) },
    })),
    next_token: page.length < rest.length && last !== undefined ? encodeToken(last.volumeId) : '',
  };
}
