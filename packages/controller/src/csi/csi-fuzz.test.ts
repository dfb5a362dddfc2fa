// R4 (issue 14): property-based fuzzing of every CSI RPC the controller serves (Identity and
// Controller) and of the registry protocol, in process against the real controller with scripted
// nodes (the node package's node-controller service on fake devices).
// Requests carry hostile values (NUL, '..', very long and unicode strings, negative and huge sizes,
// unknown capabilities and access modes, garbage parameters, wrong ids, absent required fields).
// Invariants: only the CSI spec's codes for that RPC (table below), never UNKNOWN or INTERNAL; the
// controller still answers Probe; the registered nodes stay available; every volume a fuzz case
// created is deleted again and the nodes hold nothing afterwards (no leak). StorageClass junk
// gives INVALID_ARGUMENT naming the key. Cases per RPC: PMEM_CSI_FUZZ_RUNS (default below).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { unaryCaller } from '@pmem-csi/runtime/testing';
import fc from 'fast-check';
import { PARAMETER_KEYS, POD_INFO_PREFIX, volumeIdForName } from '@pmem-csi/api';
import { GiB } from '@pmem-csi/csi';
import { fuzzRuns, fuzzSeed } from '@pmem-csi/api/testing';
import { loadCsi, loadRegistry } from '@pmem-csi/runtime';
import type { ScriptedNode } from '../testing/scripted-node.js';
import { nodeState, startScriptedNode, startTestController, type TestController } from '../testing/harness.js';

/** One unary call whose status is the answer (never thrown). */
const rawCall = unaryCaller(10_000);

const RUNS = fuzzRuns(300);
const SEED = fuzzSeed();

// ---- arbitraries -------------------------------------------------------------------------------

const HOSTILE = [
  '',
  ' ',
  '.',
  '..',
  '../..',
  '/',
  '/etc',
  '/proc/self',
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
  'ǅ\u202e\u200b',
];
const nasty = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ maxLength: 12 }),
);
const INT64 = [
  '0',
  '1',
  '-1',
  '4096',
  '1048575',
  '1048576',
  String(GiB),
  String(4 * GiB),
  String(2 ** 53),
  '9223372036854775807',
  '-9223372036854775808',
];
const int64 = fc.oneof(
  fc.constantFrom(...INT64),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
  fc.integer({ min: 0, max: 8 * GiB }).map(String),
);
const MODES = [
  'UNKNOWN',
  'SINGLE_NODE_WRITER',
  'SINGLE_NODE_READER_ONLY',
  'MULTI_NODE_READER_ONLY',
  'MULTI_NODE_SINGLE_WRITER',
  'MULTI_NODE_MULTI_WRITER',
  'SINGLE_NODE_SINGLE_WRITER',
  'SINGLE_NODE_MULTI_WRITER',
];
// Unknown enum numbers are valid on the wire (proto3 enums are open).
const mode = fc.oneof(fc.constantFrom<string | number>(...MODES), fc.integer({ min: 8, max: 10_000 }));
const fsType = fc.oneof(fc.constantFrom('', 'ext4', 'xfs', 'btrfs', 'EXT4', 'ext4 ', 'nfs', 'tmpfs', 'ext4,ro'), nasty);
const mountFlag = fc.oneof(
  fc.constantFrom('ro', 'rw', 'dax', 'bind', 'remount', 'nosuid', 'defaults,exec', 'context="x"', '-o', ',,', 'uid=0'),
  nasty,
);
const capability = fc.record(
  {
    mount: fc.record(
      {
        fs_type: fsType,
        mount_flags: fc.array(mountFlag, { maxLength: 4 }),
        volume_mount_group: fc.oneof(fc.constant(''), nasty),
      },
      { requiredKeys: [] },
    ),
    block: fc.constant({}),
    access_mode: fc.record({ mode }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const capabilities = fc.array(capability, { maxLength: 3 });
const GOOD_VALUES: Readonly<Record<string, readonly string[]>> = {
  [PARAMETER_KEYS.eraseAfter]: ['true', 'false', 'T', '0'],
  [PARAMETER_KEYS.kataContainers]: ['false', 'true'],
  [PARAMETER_KEYS.usage]: ['AppDirect', 'FileIO'],
  [PARAMETER_KEYS.persistencyModel]: ['normal'],
};
const paramKey = fc.oneof(
  fc.constantFrom(
    ...Object.values(PARAMETER_KEYS),
    `${POD_INFO_PREFIX}pvc/name`,
    'fsType',
    'csi.storage.k8s.io/fstype',
    'Usage',
    'usage ',
  ),
  nasty,
);
const paramValue = fc.oneof(
  fc.constantFrom('true', 'false', 'AppDirect', 'FileIO', 'normal', 'cache', '1Gi', 'maybe'),
  nasty,
);
const parameters = fc.dictionary(paramKey, paramValue, { maxKeys: 4 });
const NAMES = ['pvc-fuzz-a', 'pvc-fuzz-b', 'pvc-fuzz-c'];
const name = fc.oneof(fc.constantFrom(...NAMES), nasty);
const topology = fc.record({
  segments: fc.dictionary(
    fc.oneof(fc.constant('pmem-csi.intel.com/node'), nasty),
    fc.oneof(fc.constantFrom('n1', 'n2', 'n9'), nasty),
    { maxKeys: 2 },
  ),
});
const capacityRange = fc.record({ required_bytes: int64, limit_bytes: int64 }, { requiredKeys: [] });
const volumeId = fc.oneof(nasty, fc.constantFrom('nope', ...NAMES.map(volumeIdForName)));
const secrets = fc.dictionary(nasty, nasty, { maxKeys: 2 });

const hostileCreate = fc.record(
  {
    name,
    capacity_range: capacityRange,
    volume_capabilities: capabilities,
    parameters,
    secrets,
    volume_content_source: fc.oneof(
      fc.record({ snapshot: fc.record({ snapshot_id: nasty }) }),
      fc.record({ volume: fc.record({ volume_id: nasty }) }),
    ),
    accessibility_requirements: fc.record(
      { requisite: fc.array(topology, { maxLength: 2 }), preferred: fc.array(topology, { maxLength: 2 }) },
      { requiredKeys: [] },
    ),
    mutable_parameters: fc.dictionary(nasty, nasty, { maxKeys: 2 }),
  },
  { requiredKeys: [] },
);
// Mostly valid requests too (so OK, ALREADY_EXISTS and RESOURCE_EXHAUSTED are reached), some with one hostile field.
const validCreate = fc.record({
  name: fc.constantFrom(...NAMES),
  capacity_range: fc.record({
    required_bytes: fc.constantFrom('0', '1', String(GiB / 2), String(2 * GiB), String(4 * GiB), String(6 * GiB)),
  }),
  volume_capabilities: fc.constant([{ mount: { fs_type: 'xfs' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }]),
  parameters: fc.constantFrom({}, { eraseafter: 'false' }, { usage: 'FileIO' }),
});
const createVolume = fc.oneof(
  hostileCreate,
  validCreate,
  fc.tuple(validCreate, hostileCreate).map(([v, h]) => {
    const keys = Object.keys(h) as Array<keyof typeof h>;
    const k = keys[0];
    return k === undefined ? v : { ...v, [k]: h[k] };
  }),
);

// ---- the table: request generator and allowed codes per RPC ------------------------------------

// Codes any RPC may answer for bad input or while a node is not reachable (CSI's general table).
const GENERAL = ['OK', 'INVALID_ARGUMENT', 'ABORTED', 'UNAVAILABLE'];
interface RpcCase {
  readonly service: 'Identity' | 'Controller';
  readonly arb: fc.Arbitrary<object>;
  readonly codes: readonly string[];
}
const RPCS: Readonly<Record<string, RpcCase>> = {
  GetPluginInfo: { service: 'Identity', arb: fc.record({}), codes: ['OK'] },
  GetPluginCapabilities: { service: 'Identity', arb: fc.record({}), codes: ['OK'] },
  Probe: { service: 'Identity', arb: fc.record({}), codes: ['OK'] },
  CreateVolume: {
    service: 'Controller',
    arb: createVolume,
    codes: [...GENERAL, 'ALREADY_EXISTS', 'RESOURCE_EXHAUSTED', 'OUT_OF_RANGE', 'NOT_FOUND'],
  },
  DeleteVolume: {
    service: 'Controller',
    arb: fc.record({ volume_id: volumeId, secrets }, { requiredKeys: [] }),
    codes: [...GENERAL, 'FAILED_PRECONDITION'],
  },
  ValidateVolumeCapabilities: {
    service: 'Controller',
    arb: fc.record(
      {
        volume_id: volumeId,
        volume_context: fc.dictionary(nasty, nasty, { maxKeys: 3 }),
        volume_capabilities: capabilities,
        parameters,
        secrets,
      },
      { requiredKeys: [] },
    ),
    codes: [...GENERAL, 'NOT_FOUND'],
  },
  ListVolumes: {
    service: 'Controller',
    arb: fc.record(
      { max_entries: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), starting_token: nasty },
      { requiredKeys: [] },
    ),
    codes: GENERAL,
  },
  GetCapacity: {
    service: 'Controller',
    arb: fc.record(
      {
        volume_capabilities: capabilities,
        parameters,
        accessible_topology: topology,
        mutable_parameters: fc.dictionary(nasty, nasty, { maxKeys: 2 }),
      },
      { requiredKeys: [] },
    ),
    codes: GENERAL,
  },
  ControllerGetCapabilities: { service: 'Controller', arb: fc.record({}), codes: ['OK'] },
  ControllerGetVolume: {
    service: 'Controller',
    arb: fc.record({ volume_id: volumeId }, { requiredKeys: [] }),
    codes: [...GENERAL, 'NOT_FOUND'],
  },
  ControllerExpandVolume: {
    service: 'Controller',
    arb: fc.record(
      { volume_id: volumeId, capacity_range: capacityRange, secrets, volume_capability: capability },
      { requiredKeys: [] },
    ),
    // Routed to the owner node (expand-volume.ts); the spec's table: no RESOURCE_EXHAUSTED, and
    // UNIMPLEMENTED no more since the controller offers EXPAND_VOLUME.
    codes: [...GENERAL, 'NOT_FOUND', 'OUT_OF_RANGE', 'FAILED_PRECONDITION'],
  },
  // Not offered by this driver: UNIMPLEMENTED whatever the request holds.
  ControllerPublishVolume: {
    service: 'Controller',
    arb: fc.record(
      { volume_id: volumeId, node_id: nasty, volume_capability: capability, readonly: fc.boolean() },
      { requiredKeys: [] },
    ),
    codes: ['UNIMPLEMENTED'],
  },
  ControllerUnpublishVolume: {
    service: 'Controller',
    arb: fc.record({ volume_id: volumeId, node_id: nasty }, { requiredKeys: [] }),
    codes: ['UNIMPLEMENTED'],
  },
  CreateSnapshot: {
    service: 'Controller',
    arb: fc.record({ source_volume_id: volumeId, name: nasty, parameters }, { requiredKeys: [] }),
    codes: ['UNIMPLEMENTED'],
  },
  DeleteSnapshot: {
    service: 'Controller',
    arb: fc.record({ snapshot_id: nasty }, { requiredKeys: [] }),
    codes: ['UNIMPLEMENTED'],
  },
  ListSnapshots: {
    service: 'Controller',
    arb: fc.record(
      { max_entries: fc.integer({ min: -5, max: 5 }), snapshot_id: nasty, source_volume_id: nasty },
      { requiredKeys: [] },
    ),
    codes: ['UNIMPLEMENTED'],
  },
  ControllerModifyVolume: {
    service: 'Controller',
    arb: fc.record({ volume_id: volumeId, mutable_parameters: parameters }, { requiredKeys: [] }),
    codes: ['UNIMPLEMENTED'],
  },
};

// ---- raw calls -----------------------------------------------------------------------------------

/** Cases and codes per RPC, printed at the end of the file's run. */
class Tally {
  readonly #rows = new Map<string, Map<string, number>>();
  add(rpc: string, code: string): void {
    const row = this.#rows.get(rpc) ?? new Map<string, number>();
    row.set(code, (row.get(code) ?? 0) + 1);
    this.#rows.set(rpc, row);
  }
  total(): number {
    let n = 0;
    for (const row of this.#rows.values()) for (const c of row.values()) n += c;
    return n;
  }
  render(title: string): string {
    const lines = [...this.#rows].map(
      ([rpc, row]) =>
        `  ${rpc}: ${[...row.values()].reduce((a, b) => a + b, 0)} cases (${[...row].map(([c, n]) => `${c} ${n}`).join(', ')})`,
    );
    return `${title}: ${this.total()} cases\n${lines.join('\n')}`;
  }
}

const tally = new Tally();
const fcParams = (numRuns: number): fc.Parameters<unknown> => ({
  numRuns,
  ...(SEED === undefined ? {} : { seed: SEED }),
});
const short = (v: unknown): string => JSON.stringify(v).slice(0, 400);

afterAll(() => {
  // The figures the issue's closing note quotes: printed, not asserted (the tests assert).
  process.stdout.write(`${tally.render('controller fuzz (in process)')}\n`);
});

describe('controller CSI fuzzing (R4)', () => {
  let tc: TestController;
  let n1: ScriptedNode;
  let n2: ScriptedNode;
  let controller: grpc.Client;
  let identity: grpc.Client;
  const created = new Set<string>();
  const proto = loadCsi().csi.v1;

  beforeAll(async () => {
    tc = await startTestController({ vendorVersion: 'fuzz' });
    n1 = await startScriptedNode(tc, { nodeId: 'n1', freeBytes: 3 * GiB });
    n2 = await startScriptedNode(tc, { nodeId: 'n2', freeBytes: 5 * GiB });
    // The file runs longer than a node lease (30 s) on a loaded machine: without renewals both
    // nodes expired and the final leak check's deletes were (rightly) UNAVAILABLE.
    n1.startRenewing();
    n2.startRenewing();
    controller = new grpc.Client(`unix://${tc.socket}`, grpc.credentials.createInsecure());
    identity = new grpc.Client(`unix://${tc.socket}`, grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    controller.close();
    identity.close();
    await Promise.all([n1.close(), n2.close()]);
    await tc.stop();
  });

  it.each(Object.keys(RPCS))(
    '%s: only the spec codes, never UNKNOWN/INTERNAL',
    async (rpc) => {
      const spec = RPCS[rpc] as RpcCase;
      const client = spec.service === 'Identity' ? identity : controller;
      const def = spec.service === 'Identity' ? proto.Identity.service : proto.Controller.service;
      const runs = spec.codes.length === 1 && spec.codes[0] === 'OK' ? Math.max(20, Math.floor(RUNS / 10)) : RUNS;
      await fc.assert(
        fc.asyncProperty(spec.arb, async (req) => {
          const out = await rawCall(client, def, rpc, req);
          tally.add(rpc, out.code);
          if (!spec.codes.includes(out.code))
            throw new Error(
              `${rpc} answered ${out.code} (${out.details}); allowed: ${spec.codes.join(', ')}; request ${short(req)}`,
            );
          if (out.code !== 'OK' && out.details.trim() === '')
            throw new Error(`${rpc} answered ${out.code} without a message; request ${short(req)}`);
          if (rpc === 'CreateVolume' && out.code === 'OK') {
            const vol = (out.response as { volume?: { volume_id: string; volume_context: Record<string, string> } })
              .volume;
            if (vol === undefined || vol.volume_id === '')
              throw new Error(`CreateVolume OK without a volume id; request ${short(req)}`);
            created.add(vol.volume_id);
            const contextBytes = Object.entries(vol.volume_context).reduce(
              (n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v),
              0,
            );
            if (contextBytes > 4096)
              throw new Error(
                `volume_context of ${contextBytes} bytes (CSI recommends ≤ 4 KiB); request ${short(req)}`,
              );
          }
        }),
        fcParams(runs),
      );
      // No crash, nothing lost: the controller still answers and both nodes are still registered.
      expect((await rawCall(identity, proto.Identity.service, 'Probe', {})).code).toBe('OK');
      expect([nodeState(tc, 'n1'), nodeState(tc, 'n2')]).toEqual(['available', 'available']);
      // Hundreds of calls per RPC: Jest's 5-s default was hit once (5013 ms) at load average 12.
    },
    60_000,
  );

  it('StorageClass parameter junk: CreateVolume INVALID_ARGUMENT naming the key', async () => {
    const known = new Set<string>(Object.keys(GOOD_VALUES));
    const junkKey = nasty.filter((k) => !known.has(k) && !k.startsWith(POD_INFO_PREFIX));
    // Either an unknown key or a known key with a value it does not allow, among good entries.
    const junk = fc.oneof(
      junkKey.map((k) => ({ key: k, value: 'x' })),
      fc
        .constantFrom(...Object.keys(GOOD_VALUES))
        .chain((k) =>
          nasty
            .filter(
              (v) =>
                !(GOOD_VALUES[k] ?? []).includes(v) &&
                !(k.endsWith('after') || k === 'kataContainers'
                  ? ['1', 't', 'TRUE', 'True', 'f', 'F', 'FALSE', 'False'].includes(v)
                  : false),
            )
            .map((v) => ({ key: k, value: v })),
        ),
    );
    const good = fc
      .dictionary(fc.constantFrom(...Object.keys(GOOD_VALUES)), fc.constant(''), { maxKeys: 2 })
      .map((d) => Object.fromEntries(Object.keys(d).map((k) => [k, (GOOD_VALUES[k] ?? [''])[0] ?? ''])));
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(junk, good, async ({ key, value }, rest) => {
        const params = { ...rest, [key]: value };
        const out = await rawCall(controller, proto.Controller.service, 'CreateVolume', {
          name: 'pvc-junk',
          volume_capabilities: [{ mount: { fs_type: 'ext4' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
          parameters: params,
        });
        cases++;
        tally.add('CreateVolume (StorageClass junk)', out.code);
        const quoted = JSON.stringify(key.length > 64 ? `${key.slice(0, 61)}...` : key);
        if (out.code !== 'INVALID_ARGUMENT' || !out.details.includes(`parameter ${quoted}`)) {
          throw new Error(
            `parameters ${short(params)}: want INVALID_ARGUMENT naming parameter ${quoted}, got ${out.code}: ${out.details}`,
          );
        }
      }),
      fcParams(RUNS),
    );
    expect(cases).toBeGreaterThanOrEqual(RUNS);
  });

  it('leaks nothing: every created volume deletes, the nodes hold no volume afterwards', async () => {
    for (const id of created)
      expect((await rawCall(controller, proto.Controller.service, 'DeleteVolume', { volume_id: id })).code).toBe('OK');
    expect([...n1.volumes.keys(), ...n2.volumes.keys()]).toEqual([]);
    expect(tally.total()).toBeGreaterThan(0);
  });
});

// ---- registry protocol -------------------------------------------------------------------------

const capacityMsg = fc.record(
  { max_volume_size: int64, available: int64, managed: int64, total: int64 },
  { requiredKeys: [] },
);
const fuzzNodeId = fc.oneof(fc.constantFrom('fz-1', 'fz-2', ''), nasty).filter((id) => id !== 'n1');
const endpoint = fc.oneof(
  fc.constantFrom(
    '127.0.0.1:1',
    '127.0.0.1:0',
    '127.0.0.1:65536',
    '[::1]:1',
    'localhost',
    ':1',
    'unix:///etc/passwd',
    'dns:///x:1',
  ),
  nasty,
);
const inventory = fc.record(
  {
    count: int64,
    volumes: fc.array(
      fc.record(
        {
          volume_id: fc.oneof(fc.constantFrom('pvc-fuzz-a', ''), nasty),
          capacity_bytes: int64,
          volume_context: fc.dictionary(nasty, nasty, { maxKeys: 2 }),
        },
        { requiredKeys: [] },
      ),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: [] },
);
const REGISTRY_RPCS: Readonly<Record<string, { arb: fc.Arbitrary<object>; codes: readonly string[] }>> = {
  RegisterController: {
    arb: fc.record(
      {
        node_id: fuzzNodeId,
        endpoint,
        capacity: capacityMsg,
        device_mode: fc.oneof(fc.constantFrom('lvm', 'direct', 'fake', 'emulated'), nasty),
        version: nasty,
        inventory,
      },
      { requiredKeys: [] },
    ),
    codes: ['OK', 'INVALID_ARGUMENT', 'OUT_OF_RANGE', 'PERMISSION_DENIED', 'UNAVAILABLE', 'ABORTED'],
  },
  // Renewals and unregistrations for the real node too, with wrong registration ids.
  RenewController: {
    arb: fc.record(
      { node_id: fc.oneof(fc.constant('n1'), fuzzNodeId), registration_id: nasty, capacity: capacityMsg },
      { requiredKeys: [] },
    ),
    codes: ['OK', 'INVALID_ARGUMENT', 'OUT_OF_RANGE', 'NOT_FOUND', 'PERMISSION_DENIED', 'UNAVAILABLE', 'ABORTED'],
  },
  UnregisterController: {
    arb: fc.record({ node_id: fc.oneof(fc.constant('n1'), fuzzNodeId), registration_id: nasty }, { requiredKeys: [] }),
    codes: ['OK', 'INVALID_ARGUMENT', 'NOT_FOUND', 'PERMISSION_DENIED', 'UNAVAILABLE', 'ABORTED'],
  },
};

describe('registry protocol fuzzing (R4)', () => {
  let tc: TestController;
  let n1: ScriptedNode;
  let client: grpc.Client;
  const def = loadRegistry().pmemcsi.registry.v1.Registry.service;

  beforeAll(async () => {
    tc = await startTestController({ vendorVersion: 'fuzz' });
    n1 = await startScriptedNode(tc, { nodeId: 'n1', freeBytes: 3 * GiB });
    client = new grpc.Client(tc.registryAddress, grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    client.close();
    await n1.close();
    await tc.stop();
  });

  it.each(Object.keys(REGISTRY_RPCS))(
    '%s: only the expected codes; the real node keeps its registration',
    async (rpc) => {
      const spec = REGISTRY_RPCS[rpc] as { arb: fc.Arbitrary<object>; codes: readonly string[] };
      await fc.assert(
        fc.asyncProperty(spec.arb, async (req) => {
          const out = await rawCall(client, def, rpc, req);
          tally.add(`Registry.${rpc}`, out.code);
          if (!spec.codes.includes(out.code))
            throw new Error(
              `${rpc} answered ${out.code} (${out.details}); allowed: ${spec.codes.join(', ')}; request ${short(req)}`,
            );
          // A guessed registration id must never renew or remove the real node's registration.
          if (out.code === 'OK' && 'node_id' in req && req.node_id === 'n1')
            throw new Error(`${rpc} accepted a wrong registration id for n1: ${short(req)}`);
        }),
        fcParams(RUNS),
      );
      expect(nodeState(tc, 'n1')).toBe('available');
      const csiClient = new grpc.Client(`unix://${tc.socket}`, grpc.credentials.createInsecure());
      const probe = await rawCall(csiClient, loadCsi().csi.v1.Identity.service, 'Probe', {});
      csiClient.close();
      expect(probe.code).toBe('OK');
    },
  );
});
