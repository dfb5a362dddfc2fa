import { CapacityOrder, type OrderEntry } from './capacity-order.js';

const ids = (entries: readonly OrderEntry[]): string[] => entries.map((e) => e.nodeId);

describe('CapacityOrder', () => {
  it('is largest maximum volume size first, ties by node id in code-unit order (not locale order)', () => {
    const order = new CapacityOrder();
    for (const [nodeId, size] of [
      ['b', 5],
      ['a', 5],
      ['B', 5],
      ['c', 9],
      ['ä', 5],
      ['d', 1],
    ] as const)
      order.add(nodeId, size);
    expect(ids(order.entries)).toEqual(['c', 'B', 'a', 'b', 'ä', 'd']);
    expect(order.entries.map((e) => e.maxVolumeSize)).toEqual([9, 5, 5, 5, 5, 1]);
  });

  it('moves a node to where its new size sorts, and keeps the entry when the size did not change', () => {
    const order = new CapacityOrder();
    const n1 = order.add('n1', 5);
    order.add('n2', 7);
    const n3 = order.add('n3', 3);
    expect(order.move(n1, 5)).toBe(n1);
    const moved = order.move(n3, 8);
    expect(moved).toEqual({ nodeId: 'n3', maxVolumeSize: 8 });
    expect(ids(order.entries)).toEqual(['n3', 'n2', 'n1']);
    order.move(moved, 0);
    expect(ids(order.entries)).toEqual(['n2', 'n1', 'n3']);
    expect(order.entries).toHaveLength(3);
  });

  it('never changes an order once read: a change makes a new one (a walk across an await keeps its order)', () => {
    const order = new CapacityOrder();
    const a = order.add('a', 1);
    order.add('b', 2);
    const before = order.entries;
    order.move(a, 3);
    order.add('c', 4);
    expect(ids(before)).toEqual(['b', 'a']);
    expect(ids(order.entries)).toEqual(['c', 'a', 'b']);
    expect(order.entries).not.toBe(before);
  });
});
