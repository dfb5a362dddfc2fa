// Integration of the central controller with three node-driver processes over real mutual TLS
// (the pmem-csi-driver binary, certificates from our own CA): placement by topology and capacity,
// RESOURCE_EXHAUSTED when nothing fits, deletes routed to the owner, a controller restart keeps
// idempotency, a node restart keeps its volumes, a node that is down makes DeleteVolume UNAVAILABLE
// until it returns, and 20 concurrent duplicate creates end with one volume.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { topologyKey, DEFAULT_DRIVER_NAME } from '@pmem-csi/api';
import { fetchStatus, mountCapability, waitUntil, type ControllerCsi, type LocalStack } from '@pmem-csi/driver';
import { type csi, MiB } from '@pmem-csi/csi';
import { isServiceError } from '@pmem-csi/runtime';
import { useStack, whileSettling } from '../local-stack.js';

const KEY = topologyKey(DEFAULT_DRIVER_NAME);
const dir = join(tmpdir(), 'pmem-csi-e2e-integration');

let stack: LocalStack;
let ctl: ControllerCsi;

function request(
  name: string,
  size: number,
  topo?: { preferred?: string[]; requisite?: string[] },
): csi.CreateVolumeRequest {
  const seg = (ids: string[] = []): csi.Topology[] => ids.map((id) => ({ segments: { [KEY]: id } }));
  return {
    name,
    capacity_range: { required_bytes: String(size) },
    volume_capabilities: [mountCapability('ext4')],
    parameters: { eraseafter: 'false' },
    ...(topo ? { accessibility_requirements: { preferred: seg(topo.preferred), requisite: seg(topo.requisite) } } : {}),
  };
}

const nodeOf = (r: csi.CreateVolumeResponse__Output): string | undefined =>
  r.volume?.accessible_topology[0]?.segments[KEY];
const codeOf = (p: Promise<unknown>): Promise<{ code?: number; details?: string }> =>
  p.then(
    () => ({}),
    (e: unknown) => (isServiceError(e) ? { code: e.code, details: e.details } : { details: String(e) }),
  );

// Fake devices: this suite is about the control path over mTLS between processes (device
// behaviour on real loop devices is covered by the conformance and driver suites).
const env = useStack(dir, 'fake', [
  ['n1', 512 * MiB],
  ['n2', 1024 * MiB],
  ['n3', 256 * MiB],
]);
beforeAll(() => {
  stack = env.stack();
  ctl = env.ctl();
});

describe('controller + 3 node processes over mutual TLS', () => {
  it('places by topology and by capacity, and says when nothing fits', async () => {
    expect(
      nodeOf(await ctl.createVolume(request('p-pref', 64 * MiB, { preferred: ['n3', 'n1'], requisite: ['n1', 'n3'] }))),
    ).toBe('n3');
    expect(nodeOf(await ctl.createVolume(request('p-req', 64 * MiB, { requisite: ['n1'] })))).toBe('n1');
    expect(nodeOf(await ctl.createVolume(request('p-big', 700 * MiB)))).toBe('n2');
    expect(
      nodeOf(
        await ctl.createVolume(request('p-skip', 300 * MiB, { preferred: ['n3', 'n1'], requisite: ['n3', 'n1'] })),
      ),
    ).toBe('n1');
    expect(await codeOf(ctl.createVolume(request('p-huge', 2048 * MiB)))).toEqual({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: 'no node can hold 2 GiB; the largest volume available is 324 MiB (node "n2")',
    });
  });

  it('routes deletes to the owning node', async () => {
    const before = await fetchStatus(stack.statusUrl);
    const v = await ctl.createVolume(request('route-me', 32 * MiB, { requisite: ['n3'] }));
    await ctl.deleteVolume(v.volume?.volume_id ?? '');
    const after = await fetchStatus(stack.statusUrl);
    expect(after.nodes.find((n) => n.nodeId === 'n3')?.volumes).toBe(
      before.nodes.find((n) => n.nodeId === 'n3')?.volumes,
    );
  });

  it('20 concurrent duplicate creates end with exactly one volume', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => whileSettling(() => ctl.createVolume(request('dup', 16 * MiB)))),
    );
    expect(new Set(results.map((r) => r.volume?.volume_id)).size).toBe(1);
    const listed = await ctl.listVolumes();
    expect(listed.entries.filter((e) => e.volume?.volume_id === results[0]?.volume?.volume_id)).toHaveLength(1);
  });

  it('gives the same volume id for the same name after a controller restart', async () => {
    const first = await ctl.createVolume(request('restart-me', 16 * MiB));
    await stack.restart('controller', 'graceful');
    await stack.ready();
    const again = await whileSettling(() => ctl.createVolume(request('restart-me', 16 * MiB)));
    expect(again.volume?.volume_id).toBe(first.volume?.volume_id);
    expect(nodeOf(again)).toBe(nodeOf(first));
    expect((await fetchStatus(stack.statusUrl)).volumes).toBe((await ctl.listVolumes()).entries.length);
  }, 180_000);

  it('a node that is down makes DeleteVolume UNAVAILABLE (never OK), and it succeeds once the node is back', async () => {
    const v = await ctl.createVolume(request('on-n1', 16 * MiB, { requisite: ['n1'] }));
    const id = v.volume?.volume_id ?? '';
    const n1 = stack.processes.find((p) => p.name === 'n1');
    await n1?.kill();
    await waitUntil(
      'n1 to become unavailable',
      async () => {
        const s = await fetchStatus(stack.statusUrl, 2000);
        return s.nodes.find((n) => n.nodeId === 'n1')?.state === 'available' ? undefined : s;
      },
      60_000,
    );
    const down = await codeOf(ctl.deleteVolume(id));
    expect(down.code).toBe(grpc.status.UNAVAILABLE);
    expect(down.details).toMatch(/^node "n1" that holds volume ".*" is not reachable \(.*\); retry$/);
    await stack.restart('n1', 'crash');
    await stack.ready();
    await whileSettling(() => ctl.deleteVolume(id));
    expect((await ctl.listVolumes()).entries.map((e) => e.volume?.volume_id)).not.toContain(id);
  }, 180_000);
});
