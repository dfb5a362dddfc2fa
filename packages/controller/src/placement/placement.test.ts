import type { NodeView } from '../registry/node-view.js';
import { NodeRegistry } from '../registry/node-registry.js';
import {
  candidates,
  noRoomMessage,
  placementCandidates,
  placementNodesOf,
  segmentNode,
  type PlacementNodes,
  type PlacementRequest,
} from './placement.js';
import { GiB } from '@pmem-csi/csi';

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
    expect(noRoomMessage(req(1, { requisite: topo('n4'), preferred: [] }))).toBe(
      'no node can hold 1 GiB: no candidate node is available ("n4": the lease expired)',
    );
    expect(noRoomMessage({ ...req(1), nodes: placementNodesOf([]) })).toBe(
      'no node can hold 1 GiB: no node has registered',
    );
  });

  describe('from the registry', () => {
    function registry(sizes: Record<string, number>): NodeRegistry {
      const r = new NodeRegistry();
      for (const [nodeId, maxGiB] of Object.entries(sizes)) {
        const cap = { maxVolumeSize: maxGiB * GiB, available: maxGiB * GiB, managed: 0, total: 0 };
        const reg = r.register({ nodeId, endpoint: `${nodeId}:1`, capacity: cap, deviceMode: 'fake', version: 't' });
        r.markListed(nodeId, reg.registrationId);
      }
      return r;
    }
    const fromRegistry = (r: NodeRegistry, size: number, requirements: PlacementRequest['requirements'] = null) =>
      placementCandidates({ topologyKey: KEY, requirements, nodes: r, size: size * GiB }).map((n) => n.nodeId);

    it('gives the same order as the policy: preferred first, then largest first, ties by code units', () => {
      const r = registry({ n1: 2, n2: 6, n3: 4, N9: 4, 'n-b': 4 });
      expect(fromRegistry(r, 1)).toEqual(['n2', 'N9', 'n-b', 'n3', 'n1']);
      expect(fromRegistry(r, 3, { requisite: topo('n1', 'n3', 'n2'), preferred: topo('n3', 'n1') })).toEqual([
        'n3',
        'n2',
      ]);
      expect(fromRegistry(r, 1, { requisite: [], preferred: topo('n1', 'n1', 'zz') })).toEqual([
        'n1',
        'n2',
        'N9',
        'n-b',
        'n3',
      ]);
    });

    it('with every node in requisite and preferred (immediate binding in a big cluster)', () => {
      const sizes: Record<string, number> = {};
      for (let i = 0; i < 2000; i++) sizes[`node-${i}`] = 1 + (i % 50);
      const r = registry(sizes);
      const all = topo(...Object.keys(sizes));
      const first = candidates({
        topologyKey: KEY,
        requirements: { requisite: all, preferred: [...all.slice(1000), ...all.slice(0, 1000)] },
        nodes: r,
        size: GiB,
      }).next();
      expect(first.value?.nodeId).toBe('node-1000');
      expect(
        noRoomMessage({ topologyKey: KEY, requirements: { requisite: all, preferred: [] }, nodes: r, size: 51 * GiB }),
      ).toBe('no node can hold 51 GiB; the largest volume available is 50 GiB (node "node-1049")');
    });

    it('looks only at the nodes it hands out: the first candidate costs one view, whatever the preferred list', () => {
      const r = registry({ n1: 2, n2: 6, n3: 4 });
      let views = 0;
      const counting: PlacementNodes = {
        size: r.size,
        view: (id) => (views++, r.view(id)),
        largestFirst: (min, allow) => r.largestFirst(min, allow),
        list: () => r.list(),
      };
      const preferred = topo('n3', ...Array.from({ length: 1000 }, (_, i) => `other-${i}`));
      const it = candidates({
        topologyKey: KEY,
        requirements: { requisite: [], preferred },
        nodes: counting,
        size: GiB,
      });
      expect(it.next().value?.nodeId).toBe('n3');
      expect(views).toBe(1);
    });
  });
});
