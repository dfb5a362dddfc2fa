// R4 (issue 14) over the real sockets: fast-check requests with hostile values (NUL, '..', very
// long and unicode strings, negative and huge sizes, unknown capabilities and access modes, garbage
// parameters, wrong ids, absent fields) sent to the controller's and the nodes' CSI sockets of the
// local stack (real processes, fake devices). Checks: only the spec's codes per RPC (never UNKNOWN or
// INTERNAL), every process still runs and answers Probe, and the inventory (volumes, mounts,
// capacity) is the same before and after once the volumes the fuzzing created are deleted.
// Cases per RPC: PMEM_CSI_FUZZ_RUNS (default 200 → about 2,500 cases).
import * as grpc from '@grpc/grpc-js';
import { unaryCaller } from '@pmem-csi/runtime/testing';
import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fuzzRuns, fuzzSeed } from '@pmem-csi/api/testing';
import { loadCsi } from '@pmem-csi/runtime';
import { MiB } from '@pmem-csi/csi';
import { useStack } from '../local-stack.js';
import { inventory, type Inventory } from './crash-campaign.js';

/** One unary call whose status is the answer (never thrown). */
const rawCall = unaryCaller(30_000);

const RUNS = fuzzRuns(200);
const SEED = fuzzSeed();
const dir = join(tmpdir(), 'pmem-csi-e2e-fuzz');
const mountDir = join(tmpdir(), 'pmem-csi-e2e-fuzz-mounts');
const env = useStack(dir, 'fake', [
  ['f1', 512 * MiB],
  ['f2', 512 * MiB],
]);

const HOSTILE = [
  '',
  '.',
  '..',
  '../..',
  '/',
  '/etc',
  '/proc',
  'a\u0000b',
  'pvc\nx',
  '$(id)',
  'a/b',
  'x'.repeat(129),
  'y'.repeat(5000),
  '😀'.repeat(40),
];
const nasty = fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ unit: 'binary', maxLength: 200 }));
const int64 = fc.oneof(
  fc.constantFrom('0', '-1', '1', String(64 * MiB), '9223372036854775807', '-9223372036854775808'),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
);
const capability = fc.record(
  {
    mount: fc.record(
      {
        fs_type: fc.oneof(fc.constantFrom('ext4', 'xfs', 'btrfs', ''), nasty),
        mount_flags: fc.array(fc.oneof(fc.constantFrom('ro', 'dax', 'remount', 'defaults,exec'), nasty), {
          maxLength: 3,
        }),
      },
      { requiredKeys: [] },
    ),
    block: fc.constant({}),
    access_mode: fc.record(
      {
        mode: fc.oneof(
          fc.constantFrom<string | number>('SINGLE_NODE_WRITER', 'MULTI_NODE_MULTI_WRITER', 'UNKNOWN'),
          fc.integer({ min: 8, max: 1000 }),
        ),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);
const params = fc.dictionary(
  fc.oneof(
    fc.constantFrom('usage', 'eraseafter', 'persistencyModel', 'cacheSize', 'csi.storage.k8s.io/ephemeral', 'size'),
    nasty,
  ),
  fc.oneof(fc.constantFrom('true', 'AppDirect', 'normal', '64Mi'), nasty),
  { maxKeys: 3 },
);
const path = fc.oneof(
  fc.constantFrom('stage', 'pods/p/mount').map((p) => join(mountDir, p)),
  fc.constantFrom('/', '/etc', '/proc', 'relative', `${mountDir}/../x`),
  nasty,
);
const GENERAL = ['OK', 'INVALID_ARGUMENT', 'ABORTED', 'UNAVAILABLE'];

type Target = 'controller' | 'node';
interface Spec {
  readonly target: Target;
  readonly service: 'Identity' | 'Controller' | 'Node';
  readonly arb: fc.Arbitrary<object>;
  readonly codes: readonly string[];
}
const RPCS: Readonly<Record<string, Spec>> = {
  'controller Probe': { target: 'controller', service: 'Identity', arb: fc.record({}), codes: ['OK'] },
  'controller CreateVolume': {
    target: 'controller',
    service: 'Controller',
    arb: fc.oneof(
      fc.record(
        {
          name: fc.oneof(fc.constantFrom('pvc-fz-1', 'pvc-fz-2'), nasty),
          capacity_range: fc.record({ required_bytes: int64, limit_bytes: int64 }, { requiredKeys: [] }),
          volume_capabilities: fc.array(capability, { maxLength: 2 }),
          parameters: params,
        },
        { requiredKeys: [] },
      ),
      // Valid ones too, so OK, ALREADY_EXISTS and RESOURCE_EXHAUSTED are reached and the created volumes are checked for leaks.
      fc.record({
        name: fc.constantFrom('pvc-fz-1', 'pvc-fz-2', 'pvc-fz-3'),
        capacity_range: fc.record({
          required_bytes: fc.constantFrom('1', String(16 * MiB), String(64 * MiB), String(600 * MiB)),
        }),
        volume_capabilities: fc.constant([{ mount: { fs_type: 'ext4' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }]),
        parameters: fc.constantFrom({}, { eraseafter: 'false' }),
      }),
    ),
    codes: [...GENERAL, 'ALREADY_EXISTS', 'RESOURCE_EXHAUSTED', 'OUT_OF_RANGE', 'NOT_FOUND'],
  },
  'controller DeleteVolume': {
    target: 'controller',
    service: 'Controller',
    arb: fc.record({ volume_id: nasty }, { requiredKeys: [] }),
    codes: [...GENERAL, 'FAILED_PRECONDITION'],
  },
  'controller ValidateVolumeCapabilities': {
    target: 'controller',
    service: 'Controller',
    arb: fc.record(
      { volume_id: nasty, volume_capabilities: fc.array(capability, { maxLength: 2 }), parameters: params },
      { requiredKeys: [] },
    ),
    codes: [...GENERAL, 'NOT_FOUND'],
  },
  'controller ListVolumes': {
    target: 'controller',
    service: 'Controller',
    arb: fc.record(
      { max_entries: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), starting_token: nasty },
      { requiredKeys: [] },
    ),
    codes: GENERAL,
  },
  'controller GetCapacity': {
    target: 'controller',
    service: 'Controller',
    arb: fc.record(
      {
        volume_capabilities: fc.array(capability, { maxLength: 2 }),
        parameters: params,
        accessible_topology: fc.record({ segments: fc.dictionary(nasty, nasty, { maxKeys: 2 }) }),
      },
      { requiredKeys: [] },
    ),
    codes: GENERAL,
  },
  'controller ControllerGetVolume': {
    target: 'controller',
    service: 'Controller',
    arb: fc.record({ volume_id: nasty }, { requiredKeys: [] }),
    codes: [...GENERAL, 'NOT_FOUND'],
  },
  'controller ControllerPublishVolume': {
    target: 'controller',
    service: 'Controller',
    arb: fc.record({ volume_id: nasty, node_id: nasty }, { requiredKeys: [] }),
    codes: ['UNIMPLEMENTED'],
  },
  'node Probe': { target: 'node', service: 'Identity', arb: fc.record({}), codes: ['OK'] },
  'node NodeStageVolume': {
    target: 'node',
    service: 'Node',
    arb: fc.record(
      { volume_id: nasty, staging_target_path: path, volume_capability: capability, volume_context: params },
      { requiredKeys: [] },
    ),
    codes: [...GENERAL, 'NOT_FOUND', 'ALREADY_EXISTS', 'FAILED_PRECONDITION', 'OUT_OF_RANGE'],
  },
  'node NodePublishVolume': {
    target: 'node',
    service: 'Node',
    arb: fc.record(
      {
        volume_id: nasty,
        staging_target_path: path,
        target_path: path,
        volume_capability: capability,
        readonly: fc.boolean(),
        volume_context: params,
      },
      { requiredKeys: [] },
    ),
    codes: [...GENERAL, 'NOT_FOUND', 'ALREADY_EXISTS', 'FAILED_PRECONDITION', 'OUT_OF_RANGE', 'RESOURCE_EXHAUSTED'],
  },
  'node NodeUnpublishVolume': {
    target: 'node',
    service: 'Node',
    arb: fc.record({ volume_id: nasty, target_path: path }, { requiredKeys: [] }),
    codes: [...GENERAL, 'NOT_FOUND', 'FAILED_PRECONDITION'],
  },
  'node NodeUnstageVolume': {
    target: 'node',
    service: 'Node',
    arb: fc.record({ volume_id: nasty, staging_target_path: path }, { requiredKeys: [] }),
    codes: [...GENERAL, 'NOT_FOUND', 'FAILED_PRECONDITION'],
  },
  'node NodeGetVolumeStats': {
    target: 'node',
    service: 'Node',
    arb: fc.record({ volume_id: nasty, volume_path: path }, { requiredKeys: [] }),
    codes: [...GENERAL, 'NOT_FOUND'],
  },
  'node NodeExpandVolume': {
    target: 'node',
    service: 'Node',
    arb: fc.record(
      { volume_id: nasty, volume_path: path, capacity_range: fc.record({ required_bytes: int64 }) },
      { requiredKeys: [] },
    ),
    codes: [...GENERAL, 'NOT_FOUND', 'OUT_OF_RANGE', 'FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED'],
  },
  'node NodeGetInfo': { target: 'node', service: 'Node', arb: fc.record({}), codes: ['OK'] },
};

describe('R4: fuzzing over the real sockets (local stack, fake devices)', () => {
  let before: Inventory;
  const clients: grpc.Client[] = [];
  const tally = new Map<string, Map<string, number>>();
  const created = new Set<string>();
  const proto = loadCsi().csi.v1;
  const client = (socket: string): grpc.Client => {
    const c = new grpc.Client(`unix://${socket}`, grpc.credentials.createInsecure());
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    await rm(mountDir, { recursive: true, force: true });
    before = await inventory(env.stack(), env.ctl(), mountDir);
  }, 60_000);

  afterAll(async () => {
    clients.forEach((c) => c.close());
    await rm(mountDir, { recursive: true, force: true });
  });

  it(`${RUNS} cases per RPC: spec codes only, every process alive, nothing leaked`, async () => {
    const started = Date.now();
    const stack = env.stack();
    const ctl = client(stack.controllerSocket);
    const nodes = stack.nodes.map((n) => client(n.socket));
    for (const [rpc, spec] of Object.entries(RPCS)) {
      const method = rpc.split(' ')[1] ?? '';
      const runs = spec.codes.length === 1 ? Math.max(10, Math.floor(RUNS / 10)) : RUNS;
      await fc.assert(
        fc.asyncProperty(spec.arb, fc.nat(), async (req, pick) => {
          const c = spec.target === 'controller' ? ctl : (nodes[pick % nodes.length] as grpc.Client);
          const out = await rawCall(c, proto[spec.service].service, method, req);
          const row = tally.get(rpc) ?? new Map<string, number>();
          row.set(out.code, (row.get(out.code) ?? 0) + 1);
          tally.set(rpc, row);
          if (!spec.codes.includes(out.code))
            throw new Error(
              `${rpc} answered ${out.code} (${out.details}); allowed: ${spec.codes.join(', ')}; request ${JSON.stringify(req).slice(0, 400)}`,
            );
          const id = (out.response as { volume?: { volume_id?: string } } | undefined)?.volume?.volume_id;
          if (method === 'CreateVolume' && id) created.add(id);
        }),
        { numRuns: runs, ...(SEED === undefined ? {} : { seed: SEED }) },
      );
    }
    // Every process still runs and answers.
    for (const p of stack.processes)
      expect({ name: p.name, exitCode: p.child.exitCode, signal: p.child.signalCode }).toEqual({
        name: p.name,
        exitCode: null,
        signal: null,
      });
    for (const c of [ctl, ...nodes]) expect((await rawCall(c, proto.Identity.service, 'Probe', {})).code).toBe('OK');
    for (const id of created)
      expect((await rawCall(ctl, proto.Controller.service, 'DeleteVolume', { volume_id: id })).code).toBe('OK');
    const after = await inventory(stack, env.ctl(), mountDir);
    const total = [...tally.values()].reduce((n, row) => n + [...row.values()].reduce((a, b) => a + b, 0), 0);
    process.stdout.write(
      `R4 fuzz over sockets: ${total} cases in ${((Date.now() - started) / 1000).toFixed(1)} s, ${created.size} volumes created and deleted\n${[...tally].map(([rpc, row]) => `  ${rpc}: ${[...row].map(([c, n]) => `${c} ${n}`).join(', ')}`).join('\n')}\n`,
    );
    expect(after).toEqual(before);
    expect(total).toBeGreaterThanOrEqual(RUNS * 10);
  }, 600_000);
});
