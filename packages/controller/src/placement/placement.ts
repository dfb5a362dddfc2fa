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
//
// Cost: candidates are produced lazily from the registry's order by maximum volume size
// (registry/capacity-order.ts), so a CreateVolume that the first candidate accepts looks at a handful of
// nodes whatever the cluster size; the requisite list (external-provisioner may send every node
// of the cluster) is read once into a set. Only a failing placement walks every allowed node.
import type { NodeView } from '../registry/node-view.js';
import { type csi, formatBytes } from '@pmem-csi/csi';

/** What placement needs to know about the nodes; NodeRegistry implements it. */
export interface PlacementNodes {
  /** Number of known nodes (any state). */
  readonly size: number;
  /** A known node (any state), or undefined. */
  view(nodeId: string): NodeView | undefined;
  /** Available nodes with maxVolumeSize >= minSize that `allow` accepts, largest first, ties by id (code units). */
  largestFirst(minSize: number, allow?: (nodeId: string) => boolean): Iterable<NodeView>;
  /** Every known node, sorted by id (error messages only). */
  list(): readonly NodeView[];
}

export interface PlacementRequest {
  readonly topologyKey: string;
  readonly requirements: csi.TopologyRequirement__Output | null;
  /** Every known node (any state). */
  readonly nodes: PlacementNodes;
  /** Bytes the node must be able to create. */
  readonly size: number;
}

const codeUnitOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** PlacementNodes over a fixed list of views (tests, tools). */
export function placementNodesOf(views: readonly NodeView[]): PlacementNodes {
  const byId = new Map(views.map((n) => [n.nodeId, n]));
  const sorted = [...views].sort(
    (a, b) => b.capacity.maxVolumeSize - a.capacity.maxVolumeSize || codeUnitOrder(a.nodeId, b.nodeId),
  );
  return {
    size: byId.size,
    view: (nodeId) => byId.get(nodeId),
    largestFirst: (minSize, allow) =>
      sorted.filter(
        (n) =>
          n.state === 'available' && n.capacity.maxVolumeSize >= minSize && (allow === undefined || allow(n.nodeId)),
      ),
    list: () => [...views].sort((a, b) => codeUnitOrder(a.nodeId, b.nodeId)),
  };
}

/** The node a topology segment names, or undefined when it has other keys or no node. */
export function segmentNode(
  segments: Readonly<Record<string, string>> | undefined,
  topologyKey: string,
): string | undefined {
  if (segments === undefined || !Object.hasOwn(segments, topologyKey)) return undefined;
  let keys = 0;
  for (const key in segments) if (Object.hasOwn(segments, key)) keys++; // no array per segment: requisite lists can name 5,000 nodes
  const node = segments[topologyKey];
  return keys !== 1 || node === '' ? undefined : node;
}

/** The distinct nodes that `topologies` name, in order. */
function* nodesOf(
  topologies: readonly csi.Topology__Output[] | undefined,
  topologyKey: string,
): Generator<string, void, undefined> {
  const seen = new Set<string>();
  for (const t of topologies ?? []) {
    const id = segmentNode(t.segments, topologyKey);
    if (id === undefined || seen.has(id)) continue;
    seen.add(id);
    yield id;
  }
}

/** The node ids the requisite topology allows, or undefined when every node is allowed. */
function requisiteIds(req: PlacementRequest): ReadonlySet<string> | undefined {
  const requisite = req.requirements?.requisite ?? [];
  return requisite.length === 0 ? undefined : new Set(nodesOf(requisite, req.topologyKey));
}

/** The known nodes that the request's topology allows (any state), by id. */
export function allowedNodes(req: PlacementRequest): NodeView[] {
  const ids = requisiteIds(req);
  if (ids === undefined) return [...req.nodes.list()];
  const views: NodeView[] = [];
  for (const id of ids) {
    const view = req.nodes.view(id);
    if (view !== undefined) views.push(view);
  }
  return views.sort((a, b) => codeUnitOrder(a.nodeId, b.nodeId));
}

/** The nodes to try, in order (see the policy above), produced as they are asked for. */
export function* candidates(req: PlacementRequest): Generator<NodeView, void, undefined> {
  const ids = requisiteIds(req);
  const allow = ids === undefined ? undefined : (id: string): boolean => ids.has(id);
  const tried = new Set<string>();
  for (const id of nodesOf(req.requirements?.preferred, req.topologyKey)) {
    if (allow !== undefined && !allow(id)) continue;
    const view = req.nodes.view(id);
    if (view === undefined || view.state !== 'available' || view.capacity.maxVolumeSize < req.size) continue;
    tried.add(id);
    yield view;
  }
  for (const view of req.nodes.largestFirst(req.size, allow)) {
    if (!tried.has(view.nodeId)) yield view;
  }
}

/** All candidates at once (see candidates()). */
export function placementCandidates(req: PlacementRequest): NodeView[] {
  return [...candidates(req)];
}

function firstOf<T>(items: Iterable<T>): T | undefined {
  for (const item of items) return item;
  return undefined;
}

/** The RESOURCE_EXHAUSTED message when placement found nothing. */
export function noRoomMessage(req: PlacementRequest): string {
  const want = `no node can hold ${formatBytes(req.size)}`;
  const ids = requisiteIds(req);
  const anyAllowed = ids === undefined ? req.nodes.size > 0 : [...ids].some((id) => req.nodes.view(id) !== undefined);
  if (!anyAllowed) {
    return ids !== undefined
      ? `${want}: no registered node matches the requisite topology (segments must be {${JSON.stringify(req.topologyKey)}: <node>})`
      : `${want}: no node has registered`;
  }
  const allow = ids === undefined ? undefined : (id: string): boolean => ids.has(id);
  const best = firstOf(req.nodes.largestFirst(0, allow));
  if (best !== undefined) {
    return `${want}; the largest volume available is ${formatBytes(best.capacity.maxVolumeSize)} (node ${JSON.stringify(best.nodeId)})`;
  }
  const allowed = allowedNodes(req);
  return `${want}: no candidate node is available (${allowed.map((n) => `${JSON.stringify(n.nodeId)}: ${n.reason ?? n.state}`).join('; ')})`;
}
