import * as grpc from '@grpc/grpc-js';
import { volumeIdForName } from '@pmem-csi/api';
import type { ScriptedNode } from '../testing/scripted-node.js';
import {
  call,
  createRequest,
  failure,
  nodeState,
  startScriptedNode,
  startTestController,
  TestClock,
  waitFor,
  type TestController,
} from '../testing/harness.js';
import { GiB } from '@pmem-csi/csi';

describe('DeleteVolume', () => {
  let tc: TestController;
  let n1: ScriptedNode;
  let n2: ScriptedNode;
  const id = volumeIdForName('pvc-1');

  beforeEach(async () => {
    tc = await startTestController();
    n1 = await startScriptedNode(tc, { nodeId: 'n1', freeBytes: 8 * GiB });
    n2 = await startScriptedNode(tc, { nodeId: 'n2', freeBytes: 2 * GiB });
    await call.create(tc.csi, createRequest('pvc-1')); // lands on n1 (largest)
  });

  afterEach(async () => {
    await Promise.all([n1.close(), n2.close()]);
    await tc.stop();
  });

  it('is routed to the node that holds the volume', async () => {
    await call.delete(tc.csi, id);
    expect([n1.calls.DeleteVolume, n2.calls.DeleteVolume]).toEqual([1, 0]);
    expect(n1.volumes.size).toBe(0);
    expect((await call.list(tc.csi)).entries).toEqual([]);
    await call.delete(tc.csi, id); // idempotent: now unknown everywhere and provably gone
    expect(n1.calls.DeleteVolume).toBe(1);
  });

  it("answers UNAVAILABLE while the owner's lease has expired, and succeeds once it is back", async () => {
    const expiry = tc.controller.status().nodes.find((n) => n.nodeId === 'n1')?.leaseExpiresAt;
    tc.clock.advance(30_000);
    expect(await failure(call.delete(tc.csi, id))).toEqual({
      code: 'UNAVAILABLE',
      details: `node "n1" that holds volume "${id}" is not reachable (the lease expired at ${expiry} without renewal); retry`,
    });
    expect(n1.volumes.size).toBe(1);
    await n1.renew(); // refused → registers again
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 back');
    await call.delete(tc.csi, id);
    expect(n1.volumes.size).toBe(0);
  });

  it('answers UNAVAILABLE when the owner does not answer, and succeeds after it restarted elsewhere', async () => {
    await n1.stop();
    const err = await failure(call.delete(tc.csi, id));
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.details).toMatch(new RegExp(`^node "n1" that holds volume "${id}" is not reachable \\(.+\\); retry$`));
    await n1.start();
    await n1.register();
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 back');
    await call.delete(tc.csi, id);
    expect(n1.volumes.size).toBe(0);
  });

  it('treats NOT_FOUND from the owner as gone', async () => {
    await n1.removeVolumes();
    n1.failNext('DeleteVolume', grpc.status.NOT_FOUND, 'no such volume');
    await call.delete(tc.csi, id);
    expect((await call.list(tc.csi)).entries).toEqual([]);
  });

  it('returns other node errors and keeps the volume', async () => {
    n1.failNext('DeleteVolume', grpc.status.FAILED_PRECONDITION, 'volume is in use');
    expect(await failure(call.delete(tc.csi, id))).toEqual({
      code: 'FAILED_PRECONDITION',
      details: 'node "n1": volume is in use',
    });
    expect((await call.list(tc.csi)).entries.map((e) => e.volume?.volume_id)).toEqual([id]);
  });

  it('answers OK for an unknown volume only when every known node is available', async () => {
    await call.delete(tc.csi, 'unknown-volume');
    const expiry = tc.controller.status().nodes.find((n) => n.nodeId === 'n2')?.leaseExpiresAt;
    await n1.renew();
    tc.clock.advance(20_000);
    await n1.renew();
    tc.clock.advance(10_000); // n2's lease (not renewed) runs out, n1's does not
    expect(await failure(call.delete(tc.csi, 'unknown-volume'))).toEqual({
      code: 'UNAVAILABLE',
      details: `volume "unknown-volume" is not known and cannot be proven gone: node "n2" (the lease expired at ${expiry} without renewal) is not available and could hold it; retry`,
    });
  });

  it('sends the delete to the node where a create had an unknown outcome', async () => {
    n1.failNext('CreateVolume', grpc.status.DEADLINE_EXCEEDED, 'took too long');
    expect(await failure(call.create(tc.csi, createRequest('pvc-2')))).toEqual({
      code: 'DEADLINE_EXCEEDED',
      details: 'node "n1": took too long',
    });
    await call.delete(tc.csi, volumeIdForName('pvc-2'));
    expect([n1.calls.DeleteVolume, n2.calls.DeleteVolume]).toEqual([1, 0]);
  });

  it('rejects a missing id and concurrent deletes of one volume', async () => {
    expect(await failure(call.delete(tc.csi, ''))).toEqual({
      code: 'INVALID_ARGUMENT',
      details: 'volume_id is required',
    });
    n1.delay('DeleteVolume', 200);
    const [a, b] = await Promise.allSettled([call.delete(tc.csi, id), call.delete(tc.csi, id)]);
    const outcomes = [a, b].map((r) =>
      r.status === 'fulfilled'
        ? 'ok'
        : `${(r.reason as grpc.ServiceError).code} ${(r.reason as grpc.ServiceError).details}`,
    );
    expect(outcomes.sort()).toEqual([
      `${grpc.status.ABORTED} an operation on volume "${id}" is already in progress`,
      'ok',
    ]);
  });
});

describe('DeleteVolume during the settle period', () => {
  it('refuses to call an unknown volume gone before the nodes had time to register', async () => {
    const clock = new TestClock();
    const tc = await startTestController({ settleMs: 45_000, clock });
    try {
      clock.advance(7_000);
      expect(await failure(call.delete(tc.csi, 'vol-x'))).toEqual({
        code: 'UNAVAILABLE',
        details:
          'volume "vol-x" is not known and cannot be proven gone: controller started 7s ago and is still collecting volumes from nodes; retry',
      });
      clock.advance(38_000);
      await call.delete(tc.csi, 'vol-x');
    } finally {
      await tc.stop();
    }
  });
});
