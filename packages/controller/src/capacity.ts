// GetCapacity. Kubernetes (CSIStorageCapacity) asks per topology segment, i.e. per node: the
// answer is that node's last reported free bytes and maximum volume size — the maximum is what
// the scheduler needs, since PMEM space fragments. Without a segment the answer covers all
// available nodes: the sum of the free bytes and the largest maximum volume size. Unknown or
// unavailable nodes (and segments with foreign keys) have no capacity.
import type { csi } from '@pmem-csi/runtime';
import { checkCapabilities } from './capabilities.js';
import type { ControllerDeps } from './controller-deps.js';
import type { NodeView } from './node-registry.js';
import { segmentNode } from './placement.js';
import { checkParameters } from './requests.js';

function answer(available: number, maximum: number): csi.GetCapacityResponse {
  return { available_capacity: String(available), maximum_volume_size: { value: String(maximum) } };
}

function availableNodes(deps: ControllerDeps, topology: csi.Topology__Output | null): NodeView[] {
  const segments = topology?.segments ?? {};
  const nodes = deps.registry.list().filter((n) => n.state === 'available');
  if (Object.keys(segments).length === 0) return nodes;
  const nodeId = segmentNode(segments, deps.topologyKey);
  return nodes.filter((n) => n.nodeId === nodeId);
}

/** Capacity for the request's topology (validated like CreateVolume). */
export function getCapacity(deps: ControllerDeps, req: csi.GetCapacityRequest__Output): csi.GetCapacityResponse {
  checkCapabilities(req.volume_capabilities, false);
  checkParameters(req.parameters);
  const nodes = availableNodes(deps, req.accessible_topology);
  const available = nodes.reduce((sum, n) => sum + n.capacity.available, 0);
  const maximum = nodes.reduce((max, n) => Math.max(max, n.capacity.maxVolumeSize), 0);
  return answer(available, maximum);
}
