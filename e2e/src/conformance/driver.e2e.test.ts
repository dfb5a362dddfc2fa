// Our own driver-specific cases beside csi-sanity, on the real binaries (controller + node drivers
// as processes, mutual TLS): state survives a node crash, capacity is restored after a controller
// restart, ResourceExhausted when full, and 100 parallel creates and deletes.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { fetchStatus, mountCapability, type ControllerCsi, type LocalStack } from '@pmem-csi/driver';
import { MiB } from '@pmem-csi/csi';
import { useStack, whileSettling } from '../local-stack.js';

const base = join(tmpdir(), 'pmem-csi-e2e-driver');

function create(ctl: ControllerCsi, name: string, size: number) {
  return ctl.createVolume({
    name,
    capacity_range: { required_bytes: String(size) },
    volume_capabilities: [mountCapability('ext4')],
    parameters: { eraseafter: 'false' },
  });
}

describe('driver on emulated devices (needs root and loop devices)', () => {
  const env = useStack(join(base, 'emulated'), 'emulated', [['node-1', 512 * MiB]]);
  let stack: LocalStack;
  let ctl: ControllerCsi;
  beforeAll(() => {
    stack = env.stack();
    ctl = env.ctl();
  });

  it('keeps volumes across a node crash (kill -9) and restart', async () => {
    const v = (await create(ctl, 'survivor', 64 * MiB)).volume;
    await stack.restart('node-1', 'crash');
    await stack.ready(60_000);
    const listed = await whileSettling(() => ctl.listVolumes());
    expect(listed.entries.map((e) => e.volume?.volume_id)).toContain(v?.volume_id);
    const again = await whileSettling(() => create(ctl, 'survivor', 64 * MiB));
    expect(again.volume?.volume_id).toBe(v?.volume_id);
    await whileSettling(() => ctl.deleteVolume(v?.volume_id ?? ''));
    expect((await ctl.listVolumes()).entries).toEqual([]);
  }, 180_000);

  it('restores capacity after a controller restart', async () => {
    const v = (await create(ctl, 'capacity-probe', 128 * MiB)).volume;
    const before = await ctl.getCapacity();
    await stack.restart('controller', 'graceful');
    await stack.ready(60_000);
    const after = await whileSettling(() => ctl.getCapacity());
    expect(after.available_capacity).toBe(before.available_capacity);
    expect(after.maximum_volume_size).toEqual(before.maximum_volume_size);
    expect(Number(after.available_capacity)).toBe(512 * MiB - 128 * MiB);
    await whileSettling(() => ctl.deleteVolume(v?.volume_id ?? ''));
    expect(Number((await ctl.getCapacity()).available_capacity)).toBe(512 * MiB);
  }, 180_000);

  it('answers RESOURCE_EXHAUSTED when the node is full, naming the largest size', async () => {
    const big = (await create(ctl, 'filler', 448 * MiB)).volume;
    const err = await create(ctl, 'overflow', 128 * MiB).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: 'no node can hold 128 MiB; the largest volume available is 64 MiB (node "node-1")',
    });
    await ctl.deleteVolume(big?.volume_id ?? '');
  }, 120_000);
});

describe('driver on fake devices', () => {
  const env = useStack(join(base, 'fake'), 'fake', [
    ['f-1', 64 * 1024 * MiB],
    ['f-2', 64 * 1024 * MiB],
    ['f-3', 64 * 1024 * MiB],
  ]);
  let stack: LocalStack;
  let ctl: ControllerCsi;
  beforeAll(() => {
    stack = env.stack();
    ctl = env.ctl();
  });

  it('creates and deletes 100 volumes in parallel', async () => {
    const started = Date.now();
    const created = await Promise.all(
      Array.from({ length: 100 }, (_, i) => whileSettling(() => create(ctl, `stress-${i}`, 64 * MiB))),
    );
    const ids = new Set(created.map((c) => c.volume?.volume_id));
    expect(ids.size).toBe(100);
    const status = await fetchStatus(stack.statusUrl);
    expect(status.volumes).toBe(100);
    expect(status.nodes.map((n) => n.volumes).reduce((a, b) => a + b, 0)).toBe(100);
    await Promise.all([...ids].map((id) => whileSettling(() => ctl.deleteVolume(id ?? ''))));
    expect((await fetchStatus(stack.statusUrl)).volumes).toBe(0);
    expect((await ctl.listVolumes()).entries).toEqual([]);
    process.stdout.write(`\n100 parallel creates + 100 parallel deletes: ${Date.now() - started} ms\n`);
  }, 300_000);
});
