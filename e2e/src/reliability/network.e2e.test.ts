// R2 network faults (issue 14): the controller and two node drivers as real processes over mutual
// TLS (fake devices: this is about the control path), with one node made unreachable in the ways
// a network or a host fails — its process stopped (SIGSTOP), its node-controller port blackholed
// (iptables DROP), its registrations blackholed (the lease runs out), and a slow peer that answers
// late. During each, CreateVolume and DeleteVolume for that node may only fail with codes a CSI
// caller retries, and never report success for something that did not happen; when the node is
// back, the registration heals by itself and the same calls succeed, without a duplicate volume.
// At the end, a controller crash loses nothing: it lists exactly the volumes that exist.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { DEFAULT_DRIVER_NAME, topologyKey } from '@pmem-csi/api';
import { fetchStatus, mountCapability, waitUntil, type ControllerCsi, type LocalStack } from '@pmem-csi/driver';
import { type csi, MiB } from '@pmem-csi/csi';
import { type ControllerClient, grpcAddress, isServiceError, loadCsi, unary } from '@pmem-csi/runtime';
import { runTool } from '../cluster/processes.js';
import { useStack, whileSettling } from '../local-stack.js';

/** iptables through the e2e command runner (a timeout and the command named in its errors). */
const run = (bin: string, args: readonly string[]) => runTool(bin, args, { timeoutMs: 15_000 });
const KEY = topologyKey(DEFAULT_DRIVER_NAME);
const dir = join(tmpdir(), 'pmem-csi-e2e-network');
/** What a CSI caller retries: the peer is gone or slow, or the operation is still in progress. */
const RETRIABLE: ReadonlySet<number> = new Set([
  grpc.status.UNAVAILABLE,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.ABORTED,
]);
/** The caller's own deadline per call (external-provisioner's --timeout, shorter here). */
const CALL_MS = 8_000;

const env = useStack(dir, 'fake', [
  ['n1', 512 * MiB],
  ['n2', 512 * MiB],
]);
let stack: LocalStack;
let ctl: ControllerCsi;
let raw: ControllerClient;
const report: string[] = [];
const rules: string[][] = [];

beforeAll(async () => {
  stack = env.stack();
  ctl = env.ctl();
  raw = new (loadCsi().csi.v1.Controller)(grpcAddress(stack.controllerSocket), grpc.credentials.createInsecure());
  await run('iptables', ['--version']).catch((e: unknown) => {
    throw new Error(
      `these cases blackhole ports with iptables, which is not usable here (${String(e)}); CI runs as root with iptables installed`,
    );
  });
});

afterAll(async () => {
  for (const rule of rules.splice(0)) await run('iptables', ['-D', ...rule]).catch(() => undefined);
  raw?.close();
  process.stdout.write(`R2 network faults:\n${report.map((l) => `  ${l}`).join('\n')}\n`);
});

function request(name: string, node: string): csi.CreateVolumeRequest {
  return {
    name,
    capacity_range: { required_bytes: String(16 * MiB) },
    volume_capabilities: [mountCapability('ext4')],
    parameters: { eraseafter: 'false' },
    accessibility_requirements: { requisite: [{ segments: { [KEY]: node } }], preferred: [] },
  };
}

/** One call with the caller's deadline: its answer or its gRPC code. */
async function attempt<T>(
  call: (deadlineMs: number) => Promise<T>,
): Promise<{ ok: T } | { code: number; details: string }> {
  try {
    return { ok: await call(CALL_MS) };
  } catch (e) {
    if (isServiceError(e)) return { code: e.code, details: e.details };
    throw e;
  }
}

const create = (req: csi.CreateVolumeRequest) => attempt((ms) => unary(raw, raw.CreateVolume, req, { timeoutMs: ms }));
const remove = (id: string) => attempt((ms) => unary(raw, raw.DeleteVolume, { volume_id: id }, { timeoutMs: ms }));
const nodeProcess = (name: string) => {
  const p = stack.processes.find((x) => x.name === name);
  if (p?.child.pid === undefined) throw new Error(`no running process ${name}`);
  return p;
};
/** The port of a HOST:PORT flag value ('' without one). */
const portOf = (address: string | undefined): string => address?.split(':').pop() ?? '';
const ids = async (): Promise<string[]> =>
  (await ctl.listVolumes()).entries.map((e) => e.volume?.volume_id ?? '').sort();
const state = async (node: string): Promise<string | undefined> =>
  (await fetchStatus(stack.statusUrl, 3000)).nodes.find((n) => n.nodeId === node)?.state;

async function blackhole(port: string): Promise<() => Promise<void>> {
  const rule = ['INPUT', '-i', 'lo', '-p', 'tcp', '--dport', port, '-j', 'DROP'];
  await run('iptables', ['-I', ...rule]);
  rules.push(rule);
  return async () => {
    await run('iptables', ['-D', ...rule]);
    rules.splice(rules.indexOf(rule), 1);
  };
}

/** During a fault: the answer may only be retriable; records it. */
function expectRetriable(what: string, r: { ok: unknown } | { code: number; details: string }): void {
  const line = 'ok' in r ? `${what}: OK` : `${what}: ${grpc.status[r.code]} (${r.details.slice(0, 120)})`;
  report.push(line);
  expect({ what, code: 'ok' in r ? 'OK' : grpc.status[r.code] }).toEqual({
    what,
    code: expect.stringMatching(/^(UNAVAILABLE|DEADLINE_EXCEEDED|ABORTED)$/),
  });
  if (!('ok' in r)) expect(RETRIABLE.has(r.code)).toBe(true);
}

/** After the fault: retried until it succeeds, as a CSI caller does. */
async function healed<T>(what: string, call: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const value = await whileSettling(async () => {
    try {
      return await call();
    } catch (e) {
      if (isServiceError(e) && e.code === grpc.status.DEADLINE_EXCEEDED)
        throw Object.assign(e, { code: grpc.status.UNAVAILABLE });
      throw e;
    }
  }, 120_000);
  report.push(`${what}: OK after ${((Date.now() - started) / 1000).toFixed(1)} s of retries`);
  return value;
}

describe('R2: network faults between controller and node', () => {
  it('node process stopped (SIGSTOP): create and delete fail retriably, then succeed once it continues, without a duplicate', async () => {
    const kept = await whileSettling(() => ctl.createVolume(request('r2-kept', 'n1')));
    const keptId = kept.volume?.volume_id ?? '';
    const before = await ids();
    const n1 = nodeProcess('n1');
    process.kill(n1.child.pid as number, 'SIGSTOP');
    try {
      expectRetriable('SIGSTOP: CreateVolume on n1', await create(request('r2-stopped', 'n1')));
      expectRetriable('SIGSTOP: DeleteVolume of a volume on n1', await remove(keptId));
    } finally {
      process.kill(n1.child.pid as number, 'SIGCONT');
    }
    // The create the stopped node may still have received runs now: the retry must find it, not make a second one.
    const again = await healed('SIGCONT: CreateVolume retried', () => ctl.createVolume(request('r2-stopped', 'n1')));
    const after = await ids();
    expect(after.filter((id) => !before.includes(id))).toEqual([again.volume?.volume_id]);
    await healed('SIGCONT: DeleteVolume retried', () => ctl.deleteVolume(keptId));
    await healed('clean-up', () => ctl.deleteVolume(again.volume?.volume_id ?? ''));
    expect(await ids()).toEqual(before.filter((id) => id !== keptId));
  }, 300_000);

  it('node-controller port blackholed: create and delete fail retriably while the node still renews, then succeed', async () => {
    const kept = await whileSettling(() => ctl.createVolume(request('r2-bh-kept', 'n2')));
    const keptId = kept.volume?.volume_id ?? '';
    const before = await ids();
    const n2 = nodeProcess('n2').flags;
    const restore = await blackhole(portOf(n2.mode === 'node' ? n2.nodeControllerListen : undefined));
    try {
      expectRetriable('blackholed node port: CreateVolume on n2', await create(request('r2-bh', 'n2')));
      expectRetriable('blackholed node port: DeleteVolume of a volume on n2', await remove(keptId));
    } finally {
      await restore();
    }
    const again = await healed('unblocked: CreateVolume retried', () => ctl.createVolume(request('r2-bh', 'n2')));
    expect((await ids()).filter((id) => !before.includes(id))).toEqual([again.volume?.volume_id]);
    await healed('unblocked: DeleteVolume retried', () => ctl.deleteVolume(keptId));
    await healed('clean-up', () => ctl.deleteVolume(again.volume?.volume_id ?? ''));
  }, 300_000);

  it('registry port blackholed for a node: its lease runs out, it is unavailable, and it registers again by itself', async () => {
    const kept = await whileSettling(() => ctl.createVolume(request('r2-lease', 'n1')));
    const keptId = kept.volume?.volume_id ?? '';
    const controller = nodeProcess('controller').flags;
    const registryPort = portOf(controller.mode === 'controller' ? controller.registryListen : undefined);
    // Both node drivers run on this host: every renewal to the registry port is dropped.
    const restore = await blackhole(registryPort);
    const started = Date.now();
    try {
      await waitUntil(
        'n1 to become unavailable after its lease ran out',
        async () => ((await state('n1')) !== 'available' ? true : undefined),
        60_000,
      );
      report.push(`registry blackholed: n1 unavailable after ${((Date.now() - started) / 1000).toFixed(1)} s`);
      expectRetriable('lease expired: DeleteVolume of a volume on n1', await remove(keptId));
      const placed = await create(request('r2-lease-new', 'n1'));
      // Nothing available fits: RESOURCE_EXHAUSTED, on which external-provisioner reschedules a
      // WaitForFirstConsumer claim to another node (and retries an Immediate one).
      report.push(`lease expired: CreateVolume with n1 required: ${'ok' in placed ? 'OK' : grpc.status[placed.code]}`);
      expect('ok' in placed).toBe(false);
    } finally {
      await restore();
    }
    const back = Date.now();
    await waitUntil(
      'n1 to register again by itself',
      async () => ((await state('n1')) === 'available' ? true : undefined),
      60_000,
    );
    report.push(`registry unblocked: n1 available again after ${((Date.now() - back) / 1000).toFixed(1)} s`);
    await healed('re-registered: DeleteVolume retried', () => ctl.deleteVolume(keptId));
    await stack.ready();
  }, 300_000);

  it('slow peer (stopped for 3 s mid-call): an OK is real, anything else is retriable; then a controller crash loses nothing', async () => {
    const before = await ids();
    const n2 = nodeProcess('n2');
    const stopped = new Promise<void>((resolve) => {
      setTimeout(() => {
        process.kill(n2.child.pid as number, 'SIGSTOP');
        setTimeout(() => {
          process.kill(n2.child.pid as number, 'SIGCONT');
          resolve();
        }, 3000);
      }, 5);
    });
    const r = await create(request('r2-slow', 'n2'));
    await stopped;
    report.push(`slow peer: CreateVolume ${'ok' in r ? 'OK' : grpc.status[r.code]}`);
    if (!('ok' in r)) expect(RETRIABLE.has(r.code)).toBe(true);
    const final = await healed('slow peer: CreateVolume retried', () => ctl.createVolume(request('r2-slow', 'n2')));
    if ('ok' in r) expect(final.volume?.volume_id).toBe(r.ok.volume?.volume_id);
    const held = await ids();
    expect(held.filter((id) => !before.includes(id))).toEqual([final.volume?.volume_id]);
    // The controller keeps nothing on disk: after a crash it rebuilds the index from the nodes.
    await stack.restart('controller', 'crash');
    await stack.ready();
    expect(await whileSettling(() => ids())).toEqual(held);
    await healed('clean-up', () => ctl.deleteVolume(final.volume?.volume_id ?? ''));
  }, 300_000);
});
