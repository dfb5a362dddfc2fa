import type { NodeView } from '../registry/node-view.js';
import {
  absenceDoubt,
  creationDoubt,
  MAX_NODES_NAMED,
  SettleClock,
  VolumeIndex,
  type VolumeRecord,
} from './volume-index.js';

const rec = (volumeId: string, nodeId = 'n1', capacityBytes = 100): VolumeRecord => ({
  volumeId,
  nodeId,
  name: `name-${volumeId}`,
  capacityBytes,
  volumeContext: {},
});

function view(nodeId: string, state: NodeView['state'], volumesKnown = true, reason?: string): NodeView {
  return {
    nodeId,
    endpoint: 'h:1',
    state,
    reason,
    capacity: { maxVolumeSize: 0, available: 0, managed: 0, total: 0 },
    deviceMode: 'fake',
    version: 't',
    registeredAt: new Date(0),
    leaseExpiresAt: undefined,
    volumesKnown,
  };
}

describe('VolumeIndex', () => {
  it("replaces a node's volumes with its listing and reports what changed", () => {
    const index = new VolumeIndex();
    index.add(rec('a'));
    index.add(rec('b'));
    index.add(rec('x', 'n2'));
    const since = index.beginListing('n1');
    const result = index.replaceNode('n1', [rec('b', 'n1', 200), rec('c')], since);
    index.endListing('n1');
    expect(result).toEqual({ added: 1, removed: 1, unchanged: 1, keptNewer: 0, conflicts: [] });
    expect(index.list().map((r) => [r.volumeId, r.nodeId, r.capacityBytes])).toEqual([
      ['b', 'n1', 200],
      ['c', 'n1', 100],
      ['x', 'n2', 100],
    ]);
    expect(Object.fromEntries(index.countByNode())).toEqual({ n1: 2, n2: 1 });
  });

  it('keeps volumes created after the listing started and never resurrects later deletes', () => {
    const index = new VolumeIndex();
    index.add(rec('old'));
    const since = index.beginListing('n1');
    index.add(rec('new')); // created while the listing ran
    index.remove('old'); // deleted while the listing ran; the listing still shows it
    expect(index.tombstones).toBe(1);
    const result = index.replaceNode('n1', [rec('old')], since);
    expect(result).toEqual({ added: 0, removed: 0, unchanged: 0, keptNewer: 1, conflicts: [] });
    expect(index.list().map((r) => r.volumeId)).toEqual(['new']);
    index.endListing('n1');
    expect(index.tombstones).toBe(0);
  });

  it('keeps the size of a volume grown after the listing started; an older listing never shrinks it back', () => {
    const index = new VolumeIndex();
    index.add(rec('a'));
    index.add(rec('b'));
    const since = index.beginListing('n1');
    expect(index.resize('a', 300)).toBe(100); // grown while the listing ran; the listing still shows 100
    expect(index.resize('gone', 300)).toBeUndefined();
    const result = index.replaceNode('n1', [rec('a', 'n1', 100), rec('b', 'n1', 100)], since);
    index.endListing('n1');
    expect(result).toEqual({ added: 0, removed: 0, unchanged: 1, keptNewer: 1, conflicts: [] });
    expect(index.list().map((r) => [r.volumeId, r.capacityBytes, r.name])).toEqual([
      ['a', 300, 'name-a'],
      ['b', 100, 'name-b'],
    ]);
    expect(index.get('gone')).toBeUndefined();
    // A listing that starts after the growth is the truth again.
    index.replaceNode('n1', [rec('a', 'n1', 400), rec('b')], index.beginListing('n1'));
    index.endListing('n1');
    expect(index.get('a')?.capacityBytes).toBe(400);
  });

  it('remembers deletes only while a listing of their node runs (a long-running controller stays bounded)', () => {
    const index = new VolumeIndex();
    for (let i = 0; i < 1000; i++) {
      index.add(rec(`v${i}`));
      index.remove(`v${i}`);
    }
    expect(index.tombstones).toBe(0);
    // Two overlapping listings of n1: the delete stays remembered until the last one ends.
    index.add(rec('x'));
    index.add(rec('y', 'n2'));
    const first = index.beginListing('n1');
    const second = index.beginListing('n1');
    index.remove('x');
    index.remove('y'); // n2 has no listing running: no tombstone
    expect(index.tombstones).toBe(1);
    index.replaceNode('n1', [rec('x')], second);
    index.endListing('n1');
    expect(index.tombstones).toBe(1);
    index.replaceNode('n1', [rec('x')], first); // the older listing still shows x: not resurrected
    expect(index.get('x')).toBeUndefined();
    index.endListing('n1');
    expect(index.tombstones).toBe(0);
  });

  it('keeps the first owner when a second node reports the same id', () => {
    const index = new VolumeIndex();
    index.add(rec('a', 'n1'));
    const result = index.replaceNode('n2', [rec('a', 'n2')], index.beginListing('n2'));
    expect(result.conflicts).toEqual(['a']);
    expect(index.get('a')?.nodeId).toBe('n1');
  });

  it('finds by name and tracks uncertain creates until a listing settles them', () => {
    const index = new VolumeIndex();
    index.add(rec('a'));
    expect(index.findByName('name-a')?.volumeId).toBe('a');
    expect(index.findByName('')).toBeUndefined();
    index.markUncertain('u', 'n1');
    expect(index.uncertainNode('u')).toBe('n1');
    index.replaceNode('n1', [rec('a')], index.beginListing('n1'));
    index.endListing('n1');
    expect(index.uncertainNode('u')).toBeUndefined();
  });
});

describe('VolumeIndex lookups', () => {
  it('finds by name and counts per node through every kind of change', () => {
    const index = new VolumeIndex();
    index.add(rec('a'));
    index.add(rec('b'));
    index.add({ ...rec('c', 'n2'), name: '' });
    expect(index.findByName('name-a')?.volumeId).toBe('a');
    expect(index.findByName('')).toBeUndefined();
    expect([index.countOn('n1'), index.countOn('n2'), index.countOn('n3')]).toEqual([2, 1, 0]);
    index.remove('a');
    expect(index.findByName('name-a')).toBeUndefined();
    const since = index.beginListing('n1');
    index.replaceNode('n1', [rec('d'), { ...rec('b'), name: 'renamed' }], since);
    index.endListing('n1');
    expect(index.findByName('name-b')).toBeUndefined();
    expect(index.findByName('renamed')?.volumeId).toBe('b');
    expect(index.findByName('name-d')?.nodeId).toBe('n1');
    expect(Object.fromEntries(index.countByNode())).toEqual({ n1: 2, n2: 1 });
    const again = index.beginListing('n1');
    index.replaceNode('n1', [], again);
    index.endListing('n1');
    expect([index.countOn('n1'), index.findByName('renamed'), index.size]).toEqual([0, undefined, 1]);
  });

  it('knows whether a node has creates with an unknown outcome', () => {
    const index = new VolumeIndex();
    index.markUncertain('v1', 'n1');
    expect([index.hasUncertainOn('n1'), index.hasUncertainOn('n2')]).toEqual([true, false]);
    index.clearUncertain('v1');
    expect(index.hasUncertainOn('n1')).toBe(false);
  });
});

describe('settle and absence policy', () => {
  it('refuses during the settle period and names the elapsed seconds', () => {
    let now = 1_000_000;
    const settle = new SettleClock(45_000, () => now);
    now += 12_500;
    expect(creationDoubt(settle, [])).toBe(
      'controller started 12s ago and is still collecting volumes from nodes; retry',
    );
    expect(absenceDoubt(settle, [])).toBe(
      'controller started 12s ago and is still collecting volumes from nodes; retry',
    );
    now += 40_000;
    expect(settle.settled()).toBe(true);
    expect(creationDoubt(settle, [view('n1', 'available')])).toBeUndefined();
  });

  it('creation needs every known node listed; absence needs every known node available', () => {
    const settle = new SettleClock(0);
    const nodes = [
      view('n1', 'available'),
      view('n2', 'unavailable', true, 'the lease expired'),
      view('n3', 'syncing', false, "listing the node's volumes"),
    ];
    expect(creationDoubt(settle, nodes)).toBe(
      'the volumes of node "n3" (listing the node\'s volumes) are not known yet; retry',
    );
    expect(absenceDoubt(settle, nodes)).toBe(
      'node "n2" (the lease expired), node "n3" (listing the node\'s volumes) are not available and could hold it; retry',
    );
    expect(absenceDoubt(settle, [view('n1', 'available')])).toBeUndefined();
  });

  it('names at most MAX_NODES_NAMED nodes and counts the rest', () => {
    const settle = new SettleClock(0);
    const many = Array.from({ length: MAX_NODES_NAMED + 3 }, (_, i) =>
      view(`n${String(i).padStart(2, '0')}`, 'syncing', false, 'listing'),
    );
    const named = many
      .slice(0, MAX_NODES_NAMED)
      .map((n) => `node "${n.nodeId}" (listing)`)
      .join(', ');
    expect(creationDoubt(settle, many)).toBe(`the volumes of ${named} and 3 more nodes are not known yet; retry`);
    expect(absenceDoubt(settle, many)).toBe(`${named} and 3 more nodes are not available and could hold it; retry`);
  });
});
