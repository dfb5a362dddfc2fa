// VolumeReconciler.inventoryPushed (issue 17): what a controller replica does with the inventory a
// node pushes after a create, delete or expansion — nothing when it already knows it, take it at
// once when it never changed the node itself (a standby), list the node instead when it did (the
// inventory may predate its own change) or while the node is being listed, and never make the
// node unavailable.
import type { csi } from '@pmem-csi/csi';
import { nullLogger } from '@pmem-csi/runtime';
import type { NodeMutations } from '../nodes/node-port.js';
import { NodeRegistry, type Registration } from '../registry/node-registry.js';
import { VolumeReconciler, type Inventory } from './volume-reconciler.js';
import { VolumeIndex, type VolumeRecord } from './volume-index.js';

const CAPACITY = { maxVolumeSize: 1 << 30, available: 1 << 30, managed: 1 << 30, total: 1 << 30 };

/** A node port whose mutations the test sets and whose listings end when it says so. */
class StubPort {
  mutationsOf: NodeMutations = { started: 0, running: 0 };
  volumes: csi.Volume__Output[] = [];
  readonly listings: string[] = [];
  readonly #waiting: Array<() => void> = [];
  connect(): void {}
  mutations(): NodeMutations {
    return this.mutationsOf;
  }
  listVolumes(nodeId: string): Promise<csi.Volume__Output[]> {
    this.listings.push(nodeId);
    return new Promise((resolve) => this.#waiting.push(() => resolve(this.volumes)));
  }
  /** End the oldest running listing with the current volumes. */
  finish(): void {
    this.#waiting.shift()?.();
  }
}

const record = (id: string, bytes = 1024): VolumeRecord => ({
  volumeId: id,
  nodeId: 'n1',
  name: `pvc-${id}`,
  capacityBytes: bytes,
  volumeContext: { name: `pvc-${id}` },
});
const inventory = (...records: VolumeRecord[]): Inventory => ({ count: records.length, records });
const wire = (r: VolumeRecord): csi.Volume__Output => ({
  volume_id: r.volumeId,
  capacity_bytes: String(r.capacityBytes),
  volume_context: { ...r.volumeContext },
  content_source: null,
  accessible_topology: [],
});
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));

function setUp(): { registry: NodeRegistry; index: VolumeIndex; port: StubPort; reconciler: VolumeReconciler } {
  const registry = new NodeRegistry();
  const index = new VolumeIndex();
  const port = new StubPort();
  const reconciler = new VolumeReconciler({ registry, index, nodePort: port, log: nullLogger });
  return { registry, index, port, reconciler };
}

function registerN1(registry: NodeRegistry): Registration {
  return registry.register({ nodeId: 'n1', endpoint: 'h:1', capacity: CAPACITY, deviceMode: 'fake', version: 't' });
}

describe('VolumeReconciler.inventoryPushed', () => {
  it('a standby (never changed the node) takes a pushed inventory at once; the same one again changes nothing', () => {
    const { registry, index, port, reconciler } = setUp();
    const reg = registerN1(registry);
    expect(reconciler.nodeRegistered(reg, inventory())).toEqual({ via: 'inventory' });
    expect(reconciler.inventoryPushed('n1', reg.registrationId, inventory(record('v1')))).toEqual({
      via: 'inventory',
    });
    expect(index.get('v1')).toEqual(record('v1'));
    expect(registry.view('n1')?.state).toBe('available');
    expect(reconciler.inventoryPushed('n1', reg.registrationId, inventory(record('v1')))).toEqual({
      via: 'unchanged',
    });
    // A deletion made through another replica, and an expansion.
    expect(reconciler.inventoryPushed('n1', reg.registrationId, inventory(record('v2', 2048)))).toEqual({
      via: 'inventory',
    });
    expect([index.get('v1'), index.get('v2')?.capacityBytes]).toEqual([undefined, 2048]);
    expect(reconciler.inventoryPushed('n1', reg.registrationId, inventory(record('v2', 4096)))).toEqual({
      via: 'inventory',
    });
    expect(index.get('v2')?.capacityBytes).toBe(4096);
    expect(port.listings).toEqual([]);
  });

  it('a replica that changed the node itself lists it instead when the push differs; the node stays available', async () => {
    const { registry, index, port, reconciler } = setUp();
    const reg = registerN1(registry);
    reconciler.nodeRegistered(reg, inventory());
    index.add(record('v1')); // this replica created v1 ...
    port.mutationsOf = { started: 1, running: 0 };
    // ... and the node's push (taken before that create landed) does not have it.
    expect(reconciler.inventoryPushed('n1', reg.registrationId, inventory())).toEqual({
      via: 'listing',
      why: "this controller has changed the node's volumes; the inventory may predate that",
    });
    expect(index.get('v1')).toBeDefined(); // not dropped on the word of a stale inventory
    expect(registry.view('n1')?.state).toBe('available');
    // Equal to what it knows: nothing to do, even for a replica that changed the node.
    expect(reconciler.inventoryPushed('n1', reg.registrationId, inventory(record('v1')))).toEqual({
      via: 'unchanged',
    });
    port.volumes = [wire(record('v1')), wire(record('v3'))]; // the node's truth when the listing runs
    port.finish();
    await reconciler.idle();
    expect(port.listings).toEqual(['n1']);
    expect(index.countOn('n1')).toBe(2);
    expect(registry.view('n1')?.state).toBe('available');
  });

  it('a replica that grew a volume itself is not put back to the old size by a push taken before the growth', async () => {
    const { registry, index, port, reconciler } = setUp();
    const reg = registerN1(registry);
    reconciler.nodeRegistered(reg, inventory(record('v1', 1024)));
    index.resize('v1', 4096); // this replica's expansion ...
    port.mutationsOf = { started: 1, running: 0 };
    // ... and the node's push, taken before the growth landed.
    expect(reconciler.inventoryPushed('n1', reg.registrationId, inventory(record('v1', 1024)))).toEqual({
      via: 'listing',
      why: "this controller has changed the node's volumes; the inventory may predate that",
    });
    expect(index.get('v1')?.capacityBytes).toBe(4096);
    expect(reconciler.inventoryPushed('n1', reg.registrationId, inventory(record('v1', 4096)))).toEqual({
      via: 'unchanged',
    });
    port.volumes = [wire(record('v1', 4096))];
    port.finish();
    await reconciler.idle();
    expect(index.get('v1')?.capacityBytes).toBe(4096);
  });

  it('lists instead while a create or delete of its own is running, or when the inventory has only the count', async () => {
    const { registry, port, reconciler } = setUp();
    const reg = registerN1(registry);
    reconciler.nodeRegistered(reg, inventory());
    port.mutationsOf = { started: 0, running: 1 };
    expect(reconciler.inventoryPushed('n1', reg.registrationId, inventory(record('v1')))).toEqual({
      via: 'listing',
      why: 'a create, delete or expansion on the node is in progress',
    });
    port.finish();
    await reconciler.idle();
    port.mutationsOf = { started: 0, running: 0 };
    expect(reconciler.inventoryPushed('n1', reg.registrationId, { count: 1001, records: [] })).toEqual({
      via: 'listing',
      why: 'the inventory names 0 of 1001 volumes',
    });
    port.finish();
    await reconciler.idle();
    expect(port.listings).toEqual(['n1', 'n1']);
  });

  it('a push while the node is being listed queues one more listing after it (one, however many pushes)', async () => {
    const { registry, index, port, reconciler } = setUp();
    const reg = registerN1(registry);
    reconciler.nodeRegistered(reg); // no inventory: listing
    expect(registry.view('n1')?.state).toBe('syncing');
    for (let i = 0; i < 3; i++) {
      expect(reconciler.inventoryPushed('n1', reg.registrationId, inventory(record('v1')))).toEqual({
        via: 'listing',
        why: 'the node is being listed; the push may postdate that',
      });
    }
    expect(port.listings).toEqual(['n1']); // one listing of a node at a time
    port.finish(); // the first listing, taken before v1 was made
    await tick();
    expect(registry.view('n1')?.state).toBe('available');
    expect(index.get('v1')).toBeUndefined();
    port.volumes = [wire(record('v1'))];
    port.finish();
    await reconciler.idle();
    expect(port.listings).toEqual(['n1', 'n1']);
    expect(index.get('v1')).toEqual(record('v1'));
  });

  it('ignores a push for a registration that is no longer current', () => {
    const { registry, index, reconciler } = setUp();
    const old = registerN1(registry);
    reconciler.nodeRegistered(old, inventory());
    const current = registerN1(registry);
    reconciler.nodeRegistered(current, inventory());
    expect(reconciler.inventoryPushed('n1', old.registrationId, inventory(record('v1')))).toEqual({ via: 'ignored' });
    expect(reconciler.inventoryPushed('n9', old.registrationId, inventory(record('v1')))).toEqual({ via: 'ignored' });
    expect(index.get('v1')).toBeUndefined();
  });
});
