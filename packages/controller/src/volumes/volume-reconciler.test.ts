import type { csi } from '@pmem-csi/csi';
import { nullLogger } from '@pmem-csi/runtime';
import type { NodeMutations } from '../nodes/node-port.js';
import { NodeRegistry } from '../registry/node-registry.js';
import { VolumeReconciler } from './volume-reconciler.js';
import { VolumeIndex } from './volume-index.js';

/** Listings that end when the test says so. */
class ControlledListings {
  readonly started: string[] = [];
  readonly #waiting = new Map<string, (v: csi.Volume__Output[]) => void>();
  connect(): void {}
  mutations(): NodeMutations {
    return { started: 0, running: 0 };
  }
  listVolumes(nodeId: string): Promise<csi.Volume__Output[]> {
    this.started.push(nodeId);
    return new Promise((resolve) => this.#waiting.set(nodeId, resolve));
  }
  finish(nodeId: string): void {
    this.#waiting.get(nodeId)?.([]);
  }
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));

describe('VolumeReconciler', () => {
  it('runs at most maxConcurrentListings listings; the other nodes wait in order and stay syncing', async () => {
    const registry = new NodeRegistry();
    const listings = new ControlledListings();
    const reconciler = new VolumeReconciler({
      registry,
      index: new VolumeIndex(),
      nodePort: listings,
      log: nullLogger,
      maxConcurrentListings: 2,
    });
    const cap = { maxVolumeSize: 1, available: 1, managed: 1, total: 1 };
    const register = (nodeId: string) =>
      reconciler.nodeRegistered(
        registry.register({ nodeId, endpoint: 'h:1', capacity: cap, deviceMode: 'fake', version: 't' }),
      );
    expect(['a', 'b', 'c', 'd'].map(register)).toEqual(
      Array(4).fill({ via: 'listing', why: 'the node sent no inventory' }),
    );
    register('c'); // registers again while waiting: the older registration is dropped, not listed
    expect([listings.started, reconciler.queued]).toEqual([['a', 'b'], 3]);
    listings.finish('b');
    await tick();
    expect(listings.started).toEqual(['a', 'b', 'd']);
    expect(registry.view('b')?.state).toBe('available');
    expect(registry.view('c')?.state).toBe('syncing');
    listings.finish('a');
    await tick();
    expect(listings.started).toEqual(['a', 'b', 'd', 'c']);
    listings.finish('d');
    listings.finish('c');
    await reconciler.idle();
    expect(registry.list().map((n) => n.state)).toEqual(Array(4).fill('available'));
    expect(reconciler.queued).toBe(0);
  });
});
