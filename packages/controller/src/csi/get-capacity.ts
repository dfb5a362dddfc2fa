// GetCapacity. Kubernetes (CSIStorageCapacity) asks per topology segment, i.e. per node: the
// answer is that node's last reported free bytes and maximum volume size — the maximum is what
// the scheduler needs, since PMEM space fragments. Without a segment the answer covers all
// available nodes: the sum of the free bytes and the largest maximum volume size. Unknown or
// unavailable nodes (and segments with foreign keys) have no capacity.
import type { ControllerDeps } from './controller-deps.js';
import { segmentNode } from '../placement/placement.js';
import { checkCapabilities, checkParameters, type csi } from '@pmem-csi/csi';

function answer(available: number, maximum: number): csi.GetCapacityResponse {
  return { available_capacity: String(available), maximum_volume_size: { value: String(maximum) } };
}

/** Capacity for the request's topology (validated like CreateVolume). O(1) per node segment. */
export function getCapacity(deps: ControllerDeps, req: csi.GetCapacityRequest__Output): csi.GetCapacityResponse {
  checkCapabilities(req.volume_capabilities, false);
  checkParameters(req.parameters, 'createVolume');
  const segments = req.accessible_topology?.segments ?? {};
  if (Object.keys(segments).length === 0) {
    const all = deps.registry.availableCapacity();
    return answer(all.available, all.maxVolumeSize);
  }
  const nodeId = segmentNode(segments, deps.topologyKey);
  const view = nodeId === undefined ? undefined : deps.registry.view(nodeId);
  if (view?.state !== 'available') return answer(0, 0);
  return answer(view.capacity.available, view.capacity.maxVolumeSize);
}
