// CreateVolume: validate, then find-by-name-then-compare, then place and forward to a node.
// Idempotency rests on the deterministic id (volumeIdForName) and the restart-safe index (see
// volumes/volume-index.ts); placement policy is in placement/placement.ts. Runs under the per-name and per-id locks
// (controller-server.ts). A forwarded create whose outcome is unknown is marked "uncertain", and
// the next attempt goes to the same node first, so a timeout never becomes a second volume.
// Placement reads candidates lazily from the registry's capacity order; after a create the node's
// capacity estimate is adjusted locally and a refresh is left to the background (placement/capacity-refresh.ts):
// no call besides the forwarded CreateVolume happens under the locks.
import { PARAMETER_KEYS } from '@pmem-csi/api';
import {
  AlreadyExistsError,
  type CreateVolumePlan,
  type csi,
  describeRange,
  formatBytes,
  planCreateVolume,
  ResourceExhaustedError,
  sizeFits,
  UnavailableError,
} from '@pmem-csi/csi';
import type { CallContext } from '@pmem-csi/runtime';
import { toCsiVolume, type ControllerDeps } from './controller-deps.js';
import { isDefinitiveFailure } from '../nodes/node-errors.js';
import { candidates, noRoomMessage, segmentNode, type PlacementRequest } from '../placement/placement.js';
import { recordFromVolume } from '../volumes/volume-reconciler.js';
import { creationDoubt, type VolumeRecord } from '../volumes/volume-index.js';

/** A validated CreateVolume request (@pmem-csi/csi planCreateVolume) and the request it came from. */
export interface CreatePlan extends CreateVolumePlan {
  readonly request: csi.CreateVolumeRequest__Output;
}

/**
 * Validate a CreateVolume request the controller will place and forward (no side effects); the
 * node plans its own side with planCreate (node-controller/controller-create.ts, a VolumeSpec).
 * @throws InvalidArgumentError, OutOfRangeError
 */
export function planControllerCreate(req: csi.CreateVolumeRequest__Output, defaultSize: number): CreatePlan {
  return { ...planCreateVolume(req, defaultSize), request: req };
}

// Settings that make two volumes different; compared only when the existing volume's context has them.
const COMPARED = [PARAMETER_KEYS.usage, PARAMETER_KEYS.kataContainers] as const;

function parameterMismatch(existing: VolumeRecord, plan: CreatePlan): string | undefined {
  const want: Record<(typeof COMPARED)[number], string> = {
    usage: plan.parameters.usage,
    kataContainers: String(plan.parameters.kataContainers),
  };
  for (const key of COMPARED) {
    const have = existing.volumeContext[key];
    if (have !== undefined && have !== want[key])
      return `${key} ${JSON.stringify(have)}, not ${JSON.stringify(want[key])}`;
  }
  return undefined;
}

function existingVolume(deps: ControllerDeps, plan: CreatePlan, rec: VolumeRecord): csi.CreateVolumeResponse {
  const where = `volume ${JSON.stringify(plan.name)} already exists on node ${JSON.stringify(rec.nodeId)}`;
  if (!sizeFits(rec.capacityBytes, plan.size)) {
    throw new AlreadyExistsError(
      `${where} with ${formatBytes(rec.capacityBytes)}; the request asks for ${describeRange(plan.size)}`,
    );
  }
  const mismatch = parameterMismatch(rec, plan);
  if (mismatch !== undefined) throw new AlreadyExistsError(`${where} with ${mismatch}`);
  // CSI: the existing volume must also be accessible from the requested topology.
  const requisite = plan.request.accessibility_requirements?.requisite ?? [];
  if (requisite.length > 0 && !requisite.some((t) => segmentNode(t.segments, deps.topologyKey) === rec.nodeId)) {
    throw new AlreadyExistsError(`${where}, which is not in the requisite topology`);
  }
  return { volume: toCsiVolume(deps, rec) };
}

function nodeRequest(plan: CreatePlan): csi.CreateVolumeRequest {
  const r = plan.request;
  return {
    name: plan.name,
    capacity_range: { required_bytes: String(plan.size.size), limit_bytes: String(plan.size.limit) },
    volume_capabilities: r.volume_capabilities,
    parameters: r.parameters,
  };
}

type Attempt =
  { readonly ok: true; readonly response: csi.CreateVolumeResponse } | { readonly ok: false; readonly refusal: string };

/** Forward to one node: success, a RESOURCE_EXHAUSTED refusal (try the next), or a thrown error. */
async function tryNode(deps: ControllerDeps, plan: CreatePlan, nodeId: string, ctx: CallContext): Promise<Attempt> {
  const reportsBefore = deps.registry.capacityReports(nodeId);
  try {
    const volume = await deps.nodePort.createVolume(nodeId, nodeRequest(plan), ctx.signal);
    if (volume.volume_id !== plan.volumeId) {
      ctx.log.warn('node returned an unexpected volume id', {
        node: nodeId,
        expected: plan.volumeId,
        got: volume.volume_id,
      });
    }
    const listed = recordFromVolume(nodeId, volume);
    const rec: VolumeRecord = { ...listed, name: plan.name, capacityBytes: listed.capacityBytes || plan.size.size };
    deps.index.add(rec);
    deps.registry.adjustCapacity(nodeId, -rec.capacityBytes, reportsBefore);
    deps.capacity.schedule(nodeId);
    ctx.log.info('volume created', { volume: rec.volumeId, name: plan.name, node: nodeId, bytes: rec.capacityBytes });
    return { ok: true, response: { volume: toCsiVolume(deps, rec) } };
  } catch (err) {
    if (!isDefinitiveFailure(err)) {
      deps.index.markUncertain(plan.volumeId, nodeId);
      throw err;
    }
    deps.index.clearUncertain(plan.volumeId);
    if (!(err instanceof ResourceExhaustedError)) throw err;
    deps.capacity.schedule(nodeId); // its estimate was wrong
    return { ok: false, refusal: err.message };
  }
}

/** Resolve an earlier create with unknown outcome by asking the same node again (it is idempotent). */
async function retryUncertain(
  deps: ControllerDeps,
  plan: CreatePlan,
  nodeId: string,
  ctx: CallContext,
): Promise<Attempt> {
  const view = deps.registry.view(nodeId);
  if (view?.state !== 'available') {
    throw new UnavailableError(
      `an earlier attempt to create volume ${JSON.stringify(plan.name)} on node ${JSON.stringify(nodeId)} has an unknown outcome and that node is not available (${view?.reason ?? 'unknown node'}); retry`,
    );
  }
  return tryNode(deps, plan, nodeId, ctx);
}

/** Try the placement candidates in order; `refusals` collects RESOURCE_EXHAUSTED answers. */
async function placeAndCreate(
  deps: ControllerDeps,
  plan: CreatePlan,
  ctx: CallContext,
  skip: { node?: string; refusals: string[] },
): Promise<csi.CreateVolumeResponse> {
  const placement: PlacementRequest = {
    topologyKey: deps.topologyKey,
    requirements: plan.request.accessibility_requirements,
    nodes: deps.registry,
    size: plan.size.size,
  };
  const refusals = skip.refusals;
  // Lazy: each candidate is checked (available, big enough) when its turn comes, after the awaits of the ones before.
  for (const node of candidates(placement)) {
    if (node.nodeId === skip.node) continue;
    const attempt = await tryNode(deps, plan, node.nodeId, ctx);
    if (attempt.ok) return attempt.response;
    ctx.log.info('node refused the volume (stale capacity); trying the next candidate', {
      node: node.nodeId,
      reason: attempt.refusal,
    });
    refusals.push(attempt.refusal);
  }
  if (refusals.length === 0) throw new ResourceExhaustedError(noRoomMessage(placement));
  throw new ResourceExhaustedError(`no node can hold ${formatBytes(plan.size.size)}: ${refusals.join('; ')}`);
}

/** CreateVolume after validation, holding the locks. */
export async function createVolumeLocked(
  deps: ControllerDeps,
  plan: CreatePlan,
  ctx: CallContext,
): Promise<csi.CreateVolumeResponse> {
  const existing = deps.index.get(plan.volumeId) ?? deps.index.findByName(plan.name);
  if (existing !== undefined) return existingVolume(deps, plan, existing);
  const doubt = creationDoubt(deps.settle, deps.registry.nodesWithUnknownVolumes());
  if (doubt !== undefined) throw new UnavailableError(doubt);
  const uncertain = deps.index.uncertainNode(plan.volumeId);
  if (uncertain === undefined) return placeAndCreate(deps, plan, ctx, { refusals: [] });
  const first = await retryUncertain(deps, plan, uncertain, ctx);
  if (first.ok) return first.response;
  return placeAndCreate(deps, plan, ctx, { node: uncertain, refusals: [first.refusal] });
}
