import type { NodeView } from './node-registry.js';
import { noRoomMessage, placementCandidates, placementNodesOf, segmentNode, type PlacementRequest } from './placement.js';
import { GiB } from './sizes.js';

const KEY = 'pmem-csi.intel.com/node';

function node(nodeId: string, maxGiB: number, state: NodeView['state'] = 'available'): NodeView {
  return {
    nodeId,
    endpoint: `${nodeId}:10001`,
    state,
    reason: state === 'available' ? undefined : 'the lease expired',
    capacity: { maxVolumeSize: maxGiB * GiB, available: maxGiB * GiB, managed: 0, total: 0 },
    deviceMode: 'fake',
    version: 'test',
    registeredAt: new Date(0),
    leaseExpiresAt: undefined,
    volumesKnown: true,
  };
}

const topo = (...ids: string[]) => ids.map((id) => ({ segments: { [KEY]: id } }));
const nodes = [node('n1', 2), node('n2', 6), node('n3', 4), node('n4', 8, 'unavailable')];

function req(size: number, requirements: PlacementRequest['requirements'] = null): PlacementRequest {
  return { topologyKey: KEY, requirements, nodes: placementNodesOf(nodes), size: size * GiB };
}

const ids = (r: PlacementRequest) => placementCandidates(r).map((n) => n.nodeId);

describe('placement', () => {
  it('without topology: available nodes that fit, largest maximum volume size first', () => {
    expect(ids(req(1))).toEqual(['n2', 'n3', 'n1']);
    expect(ids(req(3))).toEqual(['n2', 'n3']);
  });

  it('preferred nodes first in the given order, then the rest of the requisite by size', () => {
    expect(ids(req(1, { requisite: topo('n1', 'n2', 'n3'), preferred: topo('n1', 'n3') }))).toEqual(['n1', 'n3', 'n2']);
  });

  it('requisite is a hard constraint', () => {
    expect(ids(req(1, { requisite: topo('n1', 'n3'), preferred: [] }))).toEqual(['n3', 'n1']);
  });

  it('preferred without requisite: preferred first, then every other node', () => {
    expect(ids(req(1, { requisite: [], preferred: topo('n1') }))).toEqual(['n1', 'n2', 'n3']);
  });

  it('skips preferred nodes that are too small or unavailable', () => {
    expect(ids(req(3, { requisite: [], preferred: topo('n4', 'n1', 'n3') }))).toEqual(['n3', 'n2']);
  });

  it('segments with foreign keys or unknown nodes match nothing', () => {
    expect(segmentNode({ [KEY]: 'n1', zone: 'a' }, KEY)).toBeUndefined();
    expect(segmentNode({ 'other.driver/node': 'n1' }, KEY)).toBeUndefined();
    expect(segmentNode({ [KEY]: 'n1' }, KEY)).toBe('n1');
    expect(ids(req(1, { requisite: [{ segments: { zone: 'a' } }, ...topo('n9')], preferred: [] }))).toEqual([]);
  });

  it('says why nothing fits', () => {
    expect(noRoomMessage(req(10))).toBe('no node can hold 10 GiB; the largest volume available is 6 GiB (node "n2")');
    expect(noRoomMessage(req(1, { requisite: topo('n9'), preferred: [] }))).toBe(
      'no node can hold 1 GiB: no registered node matches the requisite topology (segments must be {"pmem-csi.intel.com/node": <node>})',
    );
    expect(noRoomMessage(req(1, { requisite: topo('n4'), preferred: [] }))).toBe('no node can hold 1 GiB: no candidate node is available ("n4": the lease expired)');
    expect(noRoomMessage({ ...req(1), nodes: placementNodesOf([]) })).toBe('no node can hold 1 GiB: no node has registered');
  });
});
