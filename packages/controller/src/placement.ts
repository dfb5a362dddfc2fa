// Where a new volume goes. Pure functions of the request and the registry's view of the nodes.
//
// Placement policy:
// 1. Topology: segments use the single key `<driver>/node`; a segment with any other key, or with
//    a node this controller does not know, matches nothing. When `requisite` is given, only those
//    nodes are allowed (a hard constraint); otherwise every node is allowed.
// 2. Only *available* nodes (live lease, volumes listed) whose last reported maximum volume size
//    is at least the requested size are candidates. Capacity reports can be stale; a node that
//    then answers RESOURCE_EXHAUSTED is skipped and the next candidate is tried.
// 3. Order: the `preferred` nodes in the order given (Kubernetes puts the scheduler's selected
//    node first), then the remaining candidates by largest maximum volume size first (spreads
//    volumes and keeps the most room for big ones), ties by node id (deterministic).
// 4. No candidate → RESOURCE_EXHAUSTED (not UNAVAILABLE: the Kubernetes scheduler then picks
//    another node), naming the largest volume any allowed node could still hold.
import type { csi } from '@pmem-csi/runtime';
import type { NodeView } from './node-registry.js';
import { formatBytes } from './sizes.js';

export interface PlacementRequest {
  readonly topologyKey: string;
  readonly requirements: csi.TopologyRequirement__Output | null;
  /** Every known node (any state). */
  readonly nodes: readonly NodeView[];
  /** Bytes the node must be able to create. */
  readonly size: number;
}

/** The node a topology segment names, or undefined when it has other keys or no node. */
export function segmentNode(segments: Readonly<Record<string, string>> | undefined, topologyKey: string): string | undefined {
  const keys = Object.keys(segments ?? {});
  if (keys.length !== 1 || keys[0] !== topologyKey) return undefined;
  const node = segments?.[topologyKey];
  return node === '' ? undefined : node;
}

function nodesOf(topologies: readonly csi.Topology__Output[] | undefined, topologyKey: string): string[] {
  const ids: string[] = [];
  for (const t of topologies ?? []) {
    const id = segmentNode(t.segments, topologyKey);
    if (id !== undefined && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** The known nodes that the request's topology allows (any state). */
export function allowedNodes(req: PlacementRequest): NodeView[] {
  const requisite = req.requirements?.requisite ?? [];
  if (requisite.length === 0) return [...req.nodes];
  const ids = new Set(nodesOf(requisite, req.topologyKey));
  return req.nodes.filter((n) => ids.has(n.nodeId));
}

/** The nodes to try, in order (see the policy above). */
export function placementCandidates(req: PlacementRequest): NodeView[] {
  const fitting = allowedNodes(req).filter((n) => n.state === 'available' && n.capacity.maxVolumeSize >= req.size);
  const preferred = nodesOf(req.requirements?.preferred, req.topologyKey)
    .map((id) => fitting.find((n) => n.nodeId === id))
    .filter((n): n is NodeView => n !== undefined);
  const rest = fitting
    .filter((n) => !preferred.includes(n))
    .sort((a, b) => b.capacity.maxVolumeSize - a.capacity.maxVolumeSize || a.nodeId.localeCompare(b.nodeId));
  return [...preferred, ...rest];
}

/** The RESOURCE_EXHAUSTED message when placementCandidates found nothing. */
export function noRoomMessage(req: PlacementRequest): string {
  const want = `no node can hold ${formatBytes(req.size)}`;
  const allowed = allowedNodes(req);
  if (allowed.length === 0) {
    const requisite = req.requirements?.requisite ?? [];
    return requisite.length > 0
      ? `${want}: no registered node matches the requisite topology (segments must be {${JSON.stringify(req.topologyKey)}: <node>})`
      : `${want}: no node has registered`;
  }
  const available = allowed.filter((n) => n.state === 'available');
  if (available.length === 0) {
    return `${want}: no candidate node is available (${allowed.map((n) => `${JSON.stringify(n.nodeId)}: ${n.reason ?? n.state}`).join('; ')})`;
  }
  const best = available.reduce((a, b) => (b.capacity.maxVolumeSize > a.capacity.maxVolumeSize ? b : a));
  return `${want}; the largest volume available is ${formatBytes(best.capacity.maxVolumeSize)} (node ${JSON.stringify(best.nodeId)})`;
}
