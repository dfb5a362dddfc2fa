// CreateVolume and DeleteVolume of the node-controller service: validate the request at the edge
// (InvalidArgument naming the field), then create-or-find by the deterministic id under the
// volume's lock. The lock is taken in the same tick as validation finishes, so two concurrent
// calls for one name can never both pass; the second gets ABORTED and retries.
import { topologyKey, volumeIdForName } from '@pmem-csi/api';
import { InvalidArgumentError, ResourceExhaustedError, type CallContext, type csi } from '@pmem-csi/runtime';
import { checkCapabilities } from './capabilities.js';
import { DEFAULT_VOLUME_SIZE, type NodeServiceDeps } from './deps.js';
import { checkParameters, requireField, sizeRange, sizeToCreate, volumeName } from './requests.js';
import { createOrFindVolume, csiVolume, deleteVolume, type VolumeSpec } from './volumes.js';

function checkContentSource(source: csi.VolumeContentSource__Output | null): void {
  if (source === null || source === undefined) return;
  const kind = source.type ?? (source.snapshot ? 'snapshot' : source.volume ? 'volume' : undefined);
  if (kind === undefined) return;
  throw new InvalidArgumentError(`volume_content_source (${kind}) is not supported: no snapshots or clones; omit volume_content_source`);
}

/** RESOURCE_EXHAUSTED when requisite topologies are given and none is this node. */
function checkTopology(deps: NodeServiceDeps, req: csi.TopologyRequirement__Output | null): void {
  const requisite = req?.requisite ?? [];
  if (requisite.length === 0) return;
  const key = topologyKey(deps.driverName);
  if (requisite.some((t) => t.segments[key] === deps.nodeId)) return;
  throw new ResourceExhaustedError(`accessibility_requirements.requisite does not include this node (${key}=${deps.nodeId})`);
}

/** Validate a CreateVolume request into a volume spec (no side effects). */
export function planCreate(deps: NodeServiceDeps, req: csi.CreateVolumeRequest__Output): VolumeSpec {
  const name = volumeName(req.name);
  const range = sizeRange(req.capacity_range);
  checkCapabilities(req.volume_capabilities, true);
  const params = checkParameters(req.parameters, 'createVolume');
  checkContentSource(req.volume_content_source);
  if (Object.keys(req.mutable_parameters ?? {}).length > 0) {
    throw new InvalidArgumentError('mutable_parameters are not supported by this driver (no MODIFY_VOLUME capability); omit them');
  }
  checkTopology(deps, req.accessibility_requirements);
  const size = sizeToCreate(range, deps.defaultVolumeSize ?? DEFAULT_VOLUME_SIZE);
  return { volumeId: volumeIdForName(name), name, size, range, params, ephemeral: false };
}

/** CreateVolume: idempotent by name. */
export async function createVolumeRpc(deps: NodeServiceDeps, req: csi.CreateVolumeRequest__Output, ctx: CallContext): Promise<csi.CreateVolumeResponse> {
  const spec = planCreate(deps, req);
  return deps.locks.withLocks([spec.volumeId], 'volume', async () => {
    const volume = await createOrFindVolume(deps, spec, ctx.signal);
    return { volume: csiVolume(deps, volume) };
  });
}

/** DeleteVolume: unknown id → OK; in use → FAILED_PRECONDITION. */
export async function deleteVolumeRpc(deps: NodeServiceDeps, req: csi.DeleteVolumeRequest__Output, ctx: CallContext): Promise<csi.DeleteVolumeResponse> {
  const volumeId = requireField(req.volume_id, 'volume_id');
  await deps.locks.withLocks([volumeId], 'volume', () => deleteVolume(deps, volumeId, { ephemeral: false, signal: ctx.signal }));
  return {};
}
