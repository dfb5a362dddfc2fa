// R4 (issue 14): property-based fuzzing of every RPC a node serves (Identity, Node and the
// node-controller service the controller calls), in process against the real services on fake
// devices. Host tools go to a simulated host (a mount table, formatted devices) that records every
// mount: each must target a path the request itself names (staging_target_path or target_path)
// and lie inside the kubelet-like directory of the test, never a system directory. Invariants: only
// the CSI spec's codes per RPC, never UNKNOWN or INTERNAL; Probe still answers; afterwards the
// ordinary teardown (unpublish, unstage, delete) leaves no mount and no device.
// Cases per RPC: PMEM_CSI_FUZZ_RUNS (default 200).
import { fuzzRuns, fuzzSeed } from '@pmem-csi/api/testing';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { unaryCaller } from '@pmem-csi/runtime/testing';
import fc from 'fast-check';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EPHEMERAL_CONTEXT_KEY } from '@pmem-csi/api';
import { loadCsi, type RunOptions, type RunResult } from '@pmem-csi/runtime';
import { FakeDeviceManager } from '../device/fake.js';
import { findmntTable, type RunnerWithMountTable } from '../mount/findmnt.js';
import { startTestNode, type TestNode } from '../testing/test-node.js';
import { GiB, MiB } from '@pmem-csi/csi';

/** One unary call whose status is the answer (never thrown). */
const rawCall = unaryCaller(20_000);

const RUNS = fuzzRuns(200);
/** Per hook and case: 200 runs take ~1-2 s on a quiet machine; Jest's 5 s default failed the whole
 * file (its beforeAll) once on a machine at load 4-5. */
const FUZZ_TIMEOUT_MS = 120_000;
const SEED = fuzzSeed();

interface SimMount {
  readonly target: string;
  readonly source: string;
  readonly fstype: string;
  options: string;
}

/** A simulated host: mount table and filesystems in memory; records mounts outside what a request owns. */
class SimHost implements RunnerWithMountTable {
  readonly mounts: SimMount[] = [];
  /** Its mount table is what its findmnt answers. */
  readonly mountTable = findmntTable(this);
  readonly formatted = new Map<string, string>();
  readonly violations: string[] = [];
  owned: readonly string[] = [];
  constructor(readonly root: string) {}

  which(tool: string): string | undefined {
    return `/usr/bin/${tool}`;
  }

  async run(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    const ok = (stdout = '', exitCode = 0): RunResult => {
      if (!(options.okExitCodes ?? [0]).includes(exitCode))
        throw new Error(`${command} ${args.join(' ')}: exit code ${exitCode}`);
      return { command, args, exitCode, stdout, stderr: '', durationMs: 0 };
    };
    const json = (list: SimMount[]): string =>
      JSON.stringify({
        filesystems: list.map((m) => ({
          target: m.target,
          source: m.source,
          fstype: m.fstype,
          options: m.options,
          'vfs-options': m.options,
          'fs-options': 'rw',
        })),
      });
    switch (command) {
      case 'findmnt': {
        if (args.includes('--list')) return ok(json(this.mounts));
        const path = args.at(-1) ?? '';
        const found = this.mounts.filter((m) => m.target === path);
        return found.length === 0 ? ok('', 1) : ok(json(found));
      }
      case 'mount': {
        if (args[0] === '-o' && (args[1] ?? '').startsWith('remount')) {
          const top = this.mounts.filter((m) => m.target === args[2]).at(-1);
          if (top === undefined) return ok('', 32);
          top.options = 'ro,relatime';
          return ok();
        }
        const bind = args[0] === '--bind';
        const source = args.at(-2) ?? '';
        const target = args.at(-1) ?? '';
        this.#check(target, args);
        const under = this.mounts.filter((m) => m.target === source).at(-1);
        const fstype = bind ? (under?.fstype ?? 'devtmpfs') : (args[args.indexOf('-t') + 1] ?? 'ext4');
        const opts = args.includes('-o') ? (args[args.indexOf('-o') + 1] ?? 'rw') : 'rw';
        this.mounts.push({
          target,
          source: bind ? (under?.source ?? source) : source,
          fstype,
          options: opts.includes('ro') ? 'ro,relatime' : 'rw,relatime',
        });
        return ok();
      }
      case 'umount': {
        const target = args.at(-1) ?? '';
        const i = this.mounts.map((m) => m.target).lastIndexOf(target);
        if (i < 0) return ok('', 32);
        this.mounts.splice(i, 1);
        return ok();
      }
      case 'blkid': {
        const type = this.formatted.get(args.at(-1) ?? '');
        return type === undefined ? ok('', 2) : ok(`DEVNAME=${args.at(-1) ?? ''}\nTYPE=${type}\n`);
      }
      default:
        if (command.startsWith('mkfs.')) this.formatted.set(args.at(-1) ?? '', command.slice(5));
        return ok();
    }
  }

  #check(target: string, args: readonly string[]): void {
    if (!this.owned.includes(target))
      this.violations.push(
        `mount ${args.join(' ')}: target is not a path of the request (${JSON.stringify(this.owned)})`,
      );
    if (!target.startsWith(`${this.root}/`))
      this.violations.push(`mount ${args.join(' ')}: target outside ${this.root}`);
  }
}

// ---- arbitraries -------------------------------------------------------------------------------

const HOSTILE = [
  '',
  ' ',
  '.',
  '..',
  '../..',
  'a\u0000b',
  '\u0000',
  'pvc\nx',
  '%s%n',
  '-rf',
  '$(id)',
  'a/b',
  '\\',
  'x'.repeat(129),
  'y'.repeat(5000),
  '😀'.repeat(40),
];
const nasty = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ maxLength: 12 }),
);
const int64 = fc.oneof(
  fc.constantFrom(
    '0',
    '1',
    '-1',
    '4096',
    String(64 * MiB),
    String(400 * MiB),
    String(GiB),
    String(64 * GiB),
    String(2 ** 53),
    '9223372036854775807',
    '-9223372036854775808',
  ),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
);
const MODES = [
  'UNKNOWN',
  'SINGLE_NODE_WRITER',
  'SINGLE_NODE_READER_ONLY',
  'MULTI_NODE_READER_ONLY',
  'MULTI_NODE_MULTI_WRITER',
  'SINGLE_NODE_SINGLE_WRITER',
  'SINGLE_NODE_MULTI_WRITER',
];
const capability = fc.oneof(
  fc.constantFrom(
    { mount: { fs_type: 'ext4' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
    { block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
    { mount: { fs_type: 'xfs', mount_flags: ['dax'] }, access_mode: { mode: 'SINGLE_NODE_READER_ONLY' } },
  ),
  fc.record(
    {
      mount: fc.record(
        {
          fs_type: fc.oneof(fc.constantFrom('', 'ext4', 'xfs', 'btrfs', 'EXT4', 'tmpfs'), nasty),
          mount_flags: fc.array(
            fc.oneof(
              fc.constantFrom(
                'ro',
                'dax',
                'bind',
                'remount',
                'nosuid',
                'defaults,exec',
                'context="x"',
                '-o',
                ',,',
                'uid=0',
              ),
              nasty,
            ),
            { maxLength: 3 },
          ),
          volume_mount_group: nasty,
        },
        { requiredKeys: [] },
      ),
      block: fc.constant({}),
      access_mode: fc.record(
        { mode: fc.oneof(fc.constantFrom<string | number>(...MODES), fc.integer({ min: 8, max: 10_000 })) },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  ),
);
const context = fc.oneof(
  fc.constant({}),
  fc.record(
    {
      [EPHEMERAL_CONTEXT_KEY]: fc.constantFrom('true', 'false', 'yes'),
      size: fc.oneof(fc.constantFrom('64Mi', '0', '-1', '1Pi', '1.5Gi', 'abc'), nasty),
    },
    { requiredKeys: [] },
  ),
  fc.dictionary(
    fc.oneof(fc.constantFrom('usage', 'eraseafter', 'name', 'deviceMode', 'csi.storage.k8s.io/pod.name'), nasty),
    nasty,
    { maxKeys: 3 },
  ),
);

// ---- raw calls and the tally ---------------------------------------------------------------------

const tally = new Map<string, Map<string, number>>();
function count(rpc: string, code: string): void {
  const row = tally.get(rpc) ?? new Map<string, number>();
  row.set(code, (row.get(code) ?? 0) + 1);
  tally.set(rpc, row);
}
const short = (v: unknown): string => JSON.stringify(v).slice(0, 400);

afterAll(() => {
  const total = [...tally.values()].reduce((n, row) => n + [...row.values()].reduce((a, b) => a + b, 0), 0);
  const lines = [...tally].map(
    ([rpc, row]) =>
      `  ${rpc}: ${[...row.values()].reduce((a, b) => a + b, 0)} cases (${[...row].map(([c, n]) => `${c} ${n}`).join(', ')})`,
  );
  process.stdout.write(`node fuzz (in process): ${total} cases\n${lines.join('\n')}\n`);
});

describe('node CSI fuzzing (R4)', () => {
  let dir: string;
  let dm: FakeDeviceManager;
  let host: SimHost;
  let node: TestNode;
  let client: grpc.Client;
  const proto = loadCsi().csi.v1;
  const volumes: string[] = [];
  const VOL_NAMES = ['fz-a', 'fz-b', 'fz-big'];

  // Paths: the test's own (stage/pods below dir), hostile ones (relative, '..', system directories).
  let path: fc.Arbitrary<string>;
  let volumeId: fc.Arbitrary<string>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-fuzz-'));
    dm = new FakeDeviceManager({ totalSize: 4 * GiB });
    await dm.setup();
    host = new SimHost(dir);
    node = await startTestNode({ dm, dir, runner: host });
    client = new grpc.Client(node.address, grpc.credentials.createInsecure());
    for (const [name, size] of [
      ['fz-a', 64 * MiB],
      ['fz-b', 64 * MiB],
      ['fz-big', 400 * MiB],
    ] as const) {
      const res = await new Promise<{ volume: { volume_id: string } }>((resolve, reject) => {
        const m = proto.Controller.service['CreateVolume'];
        if (m === undefined) throw new Error('no CreateVolume');
        client.makeUnaryRequest(
          m.path,
          m.requestSerialize,
          m.responseDeserialize,
          {
            name,
            capacity_range: { required_bytes: String(size) },
            volume_capabilities: [{ mount: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
          },
          { deadline: Date.now() + 20_000 },
          (err, r) => (err ? reject(err) : resolve(r as { volume: { volume_id: string } })),
        );
      });
      volumes.push(res.volume.volume_id);
    }
    const own = fc
      .tuple(fc.constantFrom('stage', 'pods/p1', 'pods/p2', 'pods/p1/sub'), fc.constantFrom('', '/mount', '/a'))
      .map(([a, b]) => join(dir, a) + b);
    path = fc.oneof(
      own,
      own,
      fc.constantFrom(
        '/',
        '/etc',
        '/proc',
        '/sys',
        '/usr',
        '/dev',
        'relative/stage',
        './x',
        `${dir}/../escape`,
        `${dir}/stage/../../x`,
        `${dir}/stage/`,
        `${dir}//stage`,
        `${dir}/nul\u0000x`,
        `${dir}/${'l'.repeat(5000)}`,
      ),
      nasty,
    );
    volumeId = fc.oneof(
      fc.constantFrom(...volumes),
      fc.constantFrom(...volumes),
      nasty,
      fc.constant(`${volumes[0] ?? ''}/../x`),
    );
  }, FUZZ_TIMEOUT_MS);

  afterAll(async () => {
    client.close();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  }, FUZZ_TIMEOUT_MS);

  const GENERAL = ['OK', 'INVALID_ARGUMENT', 'ABORTED', 'UNAVAILABLE'];
  type Spec = {
    readonly service: 'Identity' | 'Node' | 'Controller';
    readonly arb: () => fc.Arbitrary<Record<string, unknown>>;
    readonly codes: readonly string[];
    readonly paths?: readonly string[];
  };
  const RPCS: Readonly<Record<string, Spec>> = {
    GetPluginInfo: { service: 'Identity', arb: () => fc.record({}), codes: ['OK'] },
    GetPluginCapabilities: { service: 'Identity', arb: () => fc.record({}), codes: ['OK'] },
    Probe: { service: 'Identity', arb: () => fc.record({}), codes: ['OK'] },
    NodeGetInfo: { service: 'Node', arb: () => fc.record({}), codes: ['OK'] },
    NodeGetCapabilities: { service: 'Node', arb: () => fc.record({}), codes: ['OK'] },
    NodeStageVolume: {
      service: 'Node',
      arb: () =>
        fc.record(
          {
            volume_id: volumeId,
            publish_context: fc.dictionary(nasty, nasty, { maxKeys: 2 }),
            staging_target_path: path,
            volume_capability: capability,
            secrets: fc.dictionary(nasty, nasty, { maxKeys: 1 }),
            volume_context: context,
          },
          { requiredKeys: [] },
        ),
      codes: [...GENERAL, 'NOT_FOUND', 'ALREADY_EXISTS', 'FAILED_PRECONDITION', 'OUT_OF_RANGE'],
      paths: ['staging_target_path'],
    },
    NodePublishVolume: {
      service: 'Node',
      arb: () =>
        fc.record(
          {
            volume_id: volumeId,
            staging_target_path: path,
            target_path: path,
            volume_capability: capability,
            readonly: fc.boolean(),
            secrets: fc.dictionary(nasty, nasty, { maxKeys: 1 }),
            volume_context: context,
          },
          { requiredKeys: [] },
        ),
      codes: [...GENERAL, 'NOT_FOUND', 'ALREADY_EXISTS', 'FAILED_PRECONDITION', 'OUT_OF_RANGE', 'RESOURCE_EXHAUSTED'],
      paths: ['target_path'],
    },
    NodeGetVolumeStats: {
      service: 'Node',
      arb: () => fc.record({ volume_id: volumeId, volume_path: path, staging_target_path: path }, { requiredKeys: [] }),
      codes: [...GENERAL, 'NOT_FOUND'],
    },
    // OUT_OF_RANGE also when this node grows the device itself and lacks the space (CSI's expansion table has no RESOURCE_EXHAUSTED).
    NodeExpandVolume: {
      service: 'Node',
      arb: () =>
        fc.record(
          {
            volume_id: volumeId,
            volume_path: path,
            staging_target_path: path,
            capacity_range: fc.record({ required_bytes: int64, limit_bytes: int64 }, { requiredKeys: [] }),
            volume_capability: capability,
          },
          { requiredKeys: [] },
        ),
      codes: [...GENERAL, 'NOT_FOUND', 'OUT_OF_RANGE', 'FAILED_PRECONDITION'],
    },
    // FAILED_PRECONDITION: the target holds another volume's mount, which the node refuses to unmount.
    NodeUnpublishVolume: {
      service: 'Node',
      arb: () => fc.record({ volume_id: volumeId, target_path: path }, { requiredKeys: [] }),
      codes: [...GENERAL, 'NOT_FOUND', 'FAILED_PRECONDITION'],
    },
    NodeUnstageVolume: {
      service: 'Node',
      arb: () => fc.record({ volume_id: volumeId, staging_target_path: path }, { requiredKeys: [] }),
      codes: [...GENERAL, 'NOT_FOUND', 'FAILED_PRECONDITION'],
    },
    // The node-controller service the controller calls.
    CreateVolume: {
      service: 'Controller',
      arb: () =>
        fc.record(
          {
            name: fc.oneof(fc.constantFrom(...VOL_NAMES, 'fz-new'), nasty),
            capacity_range: fc.record({ required_bytes: int64, limit_bytes: int64 }, { requiredKeys: [] }),
            volume_capabilities: fc.array(capability, { maxLength: 2 }),
            parameters: context,
          },
          { requiredKeys: [] },
        ),
      codes: [...GENERAL, 'ALREADY_EXISTS', 'RESOURCE_EXHAUSTED', 'OUT_OF_RANGE'],
    },
    DeleteVolume: {
      service: 'Controller',
      arb: () => fc.record({ volume_id: fc.oneof(nasty, fc.constant('fz-new')) }, { requiredKeys: [] }),
      codes: [...GENERAL, 'FAILED_PRECONDITION'],
    },
    ListVolumes: {
      service: 'Controller',
      arb: () =>
        fc.record(
          { max_entries: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), starting_token: nasty },
          { requiredKeys: [] },
        ),
      codes: GENERAL,
    },
    GetCapacity: {
      service: 'Controller',
      arb: () =>
        fc.record(
          { volume_capabilities: fc.array(capability, { maxLength: 2 }), parameters: context },
          { requiredKeys: [] },
        ),
      codes: GENERAL,
    },
    ControllerExpandVolume: {
      service: 'Controller',
      arb: () =>
        fc.record(
          {
            volume_id: volumeId,
            capacity_range: fc.record({ required_bytes: int64, limit_bytes: int64 }, { requiredKeys: [] }),
          },
          { requiredKeys: [] },
        ),
      codes: [...GENERAL, 'NOT_FOUND', 'OUT_OF_RANGE', 'FAILED_PRECONDITION'],
    },
    ControllerPublishVolume: {
      service: 'Controller',
      arb: () => fc.record({ volume_id: volumeId, node_id: nasty }, { requiredKeys: [] }),
      codes: ['UNIMPLEMENTED'],
    },
    CreateSnapshot: {
      service: 'Controller',
      arb: () => fc.record({ source_volume_id: volumeId, name: nasty }, { requiredKeys: [] }),
      codes: ['UNIMPLEMENTED'],
    },
  };

  it.each(Object.keys(RPCS))(
    '%s: only the spec codes, mounts only where the request says',
    async (rpc) => {
      const spec = RPCS[rpc] as Spec;
      const def = proto[spec.service].service;
      const runs = spec.codes.length === 1 ? Math.max(20, Math.floor(RUNS / 10)) : RUNS;
      await fc.assert(
        fc.asyncProperty(spec.arb(), async (req) => {
          host.owned = (spec.paths ?? []).map((k) => req[k]).filter((v): v is string => typeof v === 'string');
          const before = host.violations.length;
          const out = await rawCall(client, def, rpc, req);
          host.owned = [];
          count(rpc, out.code);
          if (!spec.codes.includes(out.code))
            throw new Error(
              `${rpc} answered ${out.code} (${out.details}); allowed: ${spec.codes.join(', ')}; request ${short(req)}`,
            );
          if (out.code !== 'OK' && out.details.trim() === '')
            throw new Error(`${rpc} answered ${out.code} without a message; request ${short(req)}`);
          if (host.violations.length > before)
            throw new Error(`${rpc}: ${host.violations.slice(before).join('; ')}; request ${short(req)}`);
        }),
        { numRuns: runs, ...(SEED === undefined ? {} : { seed: SEED }) },
      );
      expect((await rawCall(client, proto.Identity.service, 'Probe', {})).code).toBe('OK');
      expect(host.violations).toEqual([]);
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'a path below a file (<file>/, <file>/x) or with a too long name is refused (NOT_FOUND or INVALID_ARGUMENT) by stats and expand, not INTERNAL (found by this fuzzing)',
    async () => {
      const file = join(dir, 'a-file');
      await writeFile(file, '');
      for (const p of [`${file}/`, `${file}/x`, join(dir, 'n'.repeat(5000))]) {
        for (const rpc of ['NodeGetVolumeStats', 'NodeExpandVolume']) {
          const out = await rawCall(client, proto.Node.service, rpc, {
            volume_id: volumes[0],
            volume_path: p,
            capacity_range: { required_bytes: String(64 * MiB) },
          });
          expect({ rpc, p: p.slice(0, 80), refused: ['NOT_FOUND', 'INVALID_ARGUMENT'].includes(out.code) }).toEqual({
            rpc,
            p: p.slice(0, 80),
            refused: true,
          });
        }
      }
      await rm(file);
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'leaks nothing: the ordinary teardown removes every mount and device the fuzzing left',
    async () => {
      // Unpublish every target, then unstage every staging path, as the kubelet would.
      const node = proto.Node.service;
      const ids = [...new Set([...volumes, ...(await dm.listDevices()).map((d) => d.volumeId)])];
      for (const m of [...host.mounts].reverse().filter((x) => x.target.includes('/pods/'))) {
        for (const id of ids)
          await rawCall(client, node, 'NodeUnpublishVolume', { volume_id: id, target_path: m.target });
      }
      for (const m of [...host.mounts].reverse()) {
        for (const id of ids)
          await rawCall(client, node, 'NodeUnstageVolume', { volume_id: id, staging_target_path: m.target });
      }
      expect(host.mounts.map((m) => m.target)).toEqual([]);
      for (const d of await dm.listDevices())
        expect((await rawCall(client, proto.Controller.service, 'DeleteVolume', { volume_id: d.volumeId })).code).toBe(
          'OK',
        );
      expect(await dm.listDevices()).toEqual([]);
      expect(tally.size).toBeGreaterThan(0);
    },
    FUZZ_TIMEOUT_MS,
  );
});
