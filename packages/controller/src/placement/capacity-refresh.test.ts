import { type Capacity, UnavailableError } from '@pmem-csi/csi';
import { nullLogger } from '@pmem-csi/runtime';
import { CapacityRefresher } from './capacity-refresh.js';
import { NodeRegistry } from '../registry/node-registry.js';

type Answer = { available: number; maxVolumeSize: number };

/** getCapacity answers only when the test says so. */
class ControlledNode {
  readonly asked: string[] = [];
  readonly #waiting: Array<{ resolve: (a: Answer) => void; reject: (e: Error) => void }> = [];
  getCapacity = (nodeId: string): Promise<Answer> => {
    this.asked.push(nodeId);
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  };

  answer(a: Answer): void {
    this.#waiting.shift()?.resolve(a);
  }

  fail(): void {
    this.#waiting.shift()?.reject(new UnavailableError('node "n1" is not reachable: gone'));
  }
}

const cap = (max: number): Capacity => ({ maxVolumeSize: max, available: max, managed: 1000, total: 1000 });
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));
/** Poll until `cond` holds (timers on a loaded machine fire late). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await tick();
  if (!cond()) throw new Error('condition not reached within 5 s');
}

function setup(): { registry: NodeRegistry; node: ControlledNode; refresher: CapacityRefresher } {
  const registry = new NodeRegistry();
  for (const nodeId of ['n1', 'n2']) {
    const reg = registry.register({ nodeId, endpoint: 'h:1', capacity: cap(100), deviceMode: 'fake', version: 't' });
    registry.markListed(nodeId, reg.registrationId);
  }
  const node = new ControlledNode();
  return {
    registry,
    node,
    refresher: new CapacityRefresher({ registry, nodePort: node, delayMs: 0, log: nullLogger }),
  };
}

describe('CapacityRefresher', () => {
  it('asks a node once for a burst of requests, and once more for requests made while it asked', async () => {
    const { registry, node, refresher } = setup();
    for (let i = 0; i < 5; i++) refresher.schedule('n1');
    refresher.schedule('n2');
    await until(() => node.asked.length === 2);
    expect(node.asked).toEqual(['n1', 'n2']);
    refresher.schedule('n1');
    refresher.schedule('n1');
    await tick();
    expect(node.asked).toEqual(['n1', 'n2']); // at most one in flight per node
    node.answer({ available: 70, maxVolumeSize: 60 });
    node.answer({ available: 90, maxVolumeSize: 90 });
    await until(() => node.asked.length === 3);
    expect(node.asked).toEqual(['n1', 'n2', 'n1']);
    expect(registry.view('n1')?.capacity).toEqual({ maxVolumeSize: 60, available: 70, managed: 1000, total: 1000 });
    expect(registry.view('n2')?.capacity.maxVolumeSize).toBe(90);
    node.answer({ available: 65, maxVolumeSize: 65 });
    await refresher.idle();
    expect(refresher.refreshes).toBe(3);
    expect(registry.view('n1')?.capacity.maxVolumeSize).toBe(65);
  });

  it('drops an answer that may predate a local adjustment and asks again', async () => {
    const { registry, node, refresher } = setup();
    refresher.schedule('n1');
    await until(() => node.asked.length === 1);
    registry.adjustCapacity('n1', -30); // a create finished while the node was computing its answer
    refresher.schedule('n1');
    node.answer({ available: 100, maxVolumeSize: 100 });
    await until(() => node.asked.length === 2);
    expect(registry.view('n1')?.capacity.maxVolumeSize).toBe(70);
    expect(node.asked).toEqual(['n1', 'n1']);
    node.answer({ available: 70, maxVolumeSize: 70 });
    await refresher.idle();
    expect(registry.view('n1')?.capacity.maxVolumeSize).toBe(70);
  });

  it('keeps the estimate when the node cannot answer; stop() cancels what waits', async () => {
    const { registry, node, refresher } = setup();
    refresher.schedule('n1');
    await until(() => node.asked.length === 1);
    node.fail();
    await refresher.idle();
    expect(registry.view('n1')?.capacity.maxVolumeSize).toBe(100);
    const slow = new CapacityRefresher({ registry, nodePort: node, delayMs: 60_000, log: nullLogger });
    slow.schedule('n1');
    await slow.stop();
    slow.schedule('n2');
    await tick();
    expect(node.asked).toEqual(['n1']);
  });
});
