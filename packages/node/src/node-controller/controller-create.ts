// CreateVolume and DeleteVolume of the node-controller service: validate the request at the edge
// (InvalidArgument naming the field), then create-or-find by the deterministic id under the
// volume's lock. The lock is taken in the same tick as validation finishes, so two concurrent
// calls for one name can never both pass; the second gets ABORTED and retries.
import { topologyKey } from '@pmem-csi/api';
import { DEFAULT_VOLUME_SIZE, planCreateVolume, requireField, ResourceExhaustedError, type csi } from '@pmem-csi/csi';
import type { CallContext } from '@pmem-csi/runtime';
import type { NodeServiceDeps } from '../volumes/deps.js';
import { createOrFindVolume, csiVolume, deleteVolume, type VolumeSpec } from '../volumes/volumes.js';

/** RESOURCE_EXHAUSTED when requisite topologies are given and none is this node. */
function checkTopology(deps: NodeServiceDeps, req: csi.TopologyRequirement__Output | null): void {
  const requisite = req?.requisite ?? [];
  if (requisite.length === 0) return;
  const key = topologyKey(deps.driverName);
  if (requisite.some((t) => t.segments[key] === deps.nodeId)) return;
  throw new ResourceExhaustedError(
    `accessibility_requirements.requisite does not include this node (${key}=${deps.nodeId})`,
  );
}

/** Validate a CreateVolume request into a volume spec (no side effects): the central controller's plan, and this node's topology. */
export function planCreate(deps: NodeServiceDeps, req: csi.CreateVolumeRequest__Output): VolumeSpec {
  const plan = planCreateVolume(req, deps.defaultVolumeSize ?? DEFAULT_VOLUME_SIZE);
  checkTopology(deps, req.accessibility_requirements);
  const { volumeId, name, size, parameters } = plan;
  return {
    volumeId,
    name,
    size: size.size,
    range: { required: size.required, limit: size.limit },
    params: parameters,
    ephemeral: false,
  };
}

/** CreateVolume: idempotent by name. */
export async function createVolumeRpc(
  deps: NodeServiceDeps,
  req: csi.CreateVolumeRequest__Output,
  ctx: CallContext,
): Promise<csi.CreateVolumeResponse> {
  const spec = planCreate(deps, req);
  return deps.locks.withLocks([spec.volumeId], 'volume', async () => {
    const volume = await createOrFindVolume(deps, spec, ctx.signal);
    return { volume: csiVolume(deps, volume) };
  });
}

/** DeleteVolume: unknown id → OK; in use → FAILED_PRECONDITION. */
export async function deleteVolumeRpc(
  deps: NodeServiceDeps,
  req: csi.DeleteVolumeRequest__Output,
  ctx: CallContext,
): Promise<csi.DeleteVolumeResponse> {
  const volumeId = requireField(req.volume_id, 'volume_id');
  await deps.locks.withLocks([volumeId], 'volume', () =>
    deleteVolume(deps, volumeId, { ephemeral: false, signal: ctx.signal }),
  );
  return {};
}
