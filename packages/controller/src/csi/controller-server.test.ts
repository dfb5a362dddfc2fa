import { volumeIdForName } from '@pmem-csi/api';
import { unary } from '@pmem-csi/runtime';
import type { ScriptedNode } from '../testing/scripted-node.js';
import {
  call,
  createRequest,
  failure,
  startScriptedNode,
  startTestController,
  type TestController,
} from '../testing/harness.js';
import { type csi, GiB } from '@pmem-csi/csi';

const KEY = 'pmem-csi.intel.com/node';
const mount: csi.VolumeCapability = { mount: { fs_type: 'xfs' }, access_mode: { mode: 'SINGLE_NODE_MULTI_WRITER' } };

describe('CSI Controller queries and Identity', () => {
  let tc: TestController;
  let n1: ScriptedNode;
  let n2: ScriptedNode;

  beforeEach(async () => {
    tc = await startTestController({ vendorVersion: '1.2.3' });
    n1 = await startScriptedNode(tc, { nodeId: 'n1', freeBytes: 3 * GiB });
    n2 = await startScriptedNode(tc, { nodeId: 'n2', freeBytes: 5 * GiB });
  });

  afterEach(async () => {
    await Promise.all([n1.close(), n2.close()]);
    await tc.stop();
  });

  describe('ListVolumes', () => {
    const names = ['pvc-a', 'pvc-b', 'pvc-c', 'pvc-d', 'pvc-e'];
    const sortedIds = names.map(volumeIdForName).sort();

    beforeEach(async () => {
      for (const name of names)
        await call.create(tc.csi, createRequest(name, { capacity_range: { required_bytes: String(GiB / 2) } }));
    });

    it('pages through all volumes in id order', async () => {
      const seen: string[] = [];
      let token = '';
      const pages: number[] = [];
      do {
        const page = await call.list(tc.csi, { max_entries: 2, starting_token: token });
        pages.push(page.entries.length);
        for (const e of page.entries) {
          seen.push(e.volume?.volume_id ?? '');
          expect(e.volume?.accessible_topology).toHaveLength(1);
          expect(e.status?.volume_condition).toEqual({
            abnormal: false,
            message: `on node ${JSON.stringify(e.volume?.accessible_topology[0]?.segments[KEY])}`,
          });
        }
        token = page.next_token;
      } while (token !== '');
      expect(pages).toEqual([2, 2, 1]);
      expect(seen).toEqual(sortedIds);
      expect((await call.list(tc.csi)).entries.map((e) => e.volume?.volume_id)).toEqual(sortedIds);
    });

    it('continues after a token whose volume was deleted meanwhile', async () => {
      const first = await call.list(tc.csi, { max_entries: 2 });
      await call.delete(tc.csi, sortedIds[1] as string);
      const rest = await call.list(tc.csi, { starting_token: first.next_token });
      expect(rest.entries.map((e) => e.volume?.volume_id)).toEqual(sortedIds.slice(2));
      expect(rest.next_token).toBe('');
    });

    it('rejects invalid tokens with ABORTED and negative max_entries with INVALID_ARGUMENT', async () => {
      expect(await failure(call.list(tc.csi, { starting_token: 'invalid-token' }))).toEqual({
        code: 'ABORTED',
        details: 'starting_token "invalid-token" is not valid; list again without a token',
      });
      expect(await failure(call.list(tc.csi, { max_entries: -1 }))).toEqual({
        code: 'INVALID_ARGUMENT',
        details: 'max_entries must not be negative, got -1',
      });
    });
  });

  describe('GetCapacity', () => {
    it('answers per node segment and in total', async () => {
      expect(await call.capacity(tc.csi, { accessible_topology: { segments: { [KEY]: 'n1' } } })).toEqual({
        available_capacity: String(3 * GiB),
        maximum_volume_size: { value: String(3 * GiB) },
        minimum_volume_size: null,
      });
      expect(await call.capacity(tc.csi, { volume_capabilities: [mount], parameters: { eraseafter: 'true' } })).toEqual(
        {
          available_capacity: String(8 * GiB),
          maximum_volume_size: { value: String(5 * GiB) },
          minimum_volume_size: null,
        },
      );
    });

    it('answers 0 for unknown and unavailable nodes and for foreign segments', async () => {
      const zero = { available_capacity: '0', maximum_volume_size: { value: '0' }, minimum_volume_size: null };
      expect(await call.capacity(tc.csi, { accessible_topology: { segments: { [KEY]: 'n9' } } })).toEqual(zero);
      expect(
        await call.capacity(tc.csi, { accessible_topology: { segments: { 'topology.kubernetes.io/zone': 'a' } } }),
      ).toEqual(zero);
      await n2.renew();
      tc.clock.advance(30_000);
      await n2.renew(); // re-registers n2 only
      await tc.controller.idle();
      expect(await call.capacity(tc.csi, { accessible_topology: { segments: { [KEY]: 'n1' } } })).toEqual(zero);
      expect((await call.capacity(tc.csi)).available_capacity).toBe(String(5 * GiB));
    });

    it('validates capabilities and parameters like CreateVolume', async () => {
      expect(
        await failure(
          call.capacity(tc.csi, {
            volume_capabilities: [{ block: {}, access_mode: { mode: 'MULTI_NODE_READER_ONLY' } }],
          }),
        ),
      ).toEqual({
        code: 'INVALID_ARGUMENT',
        details:
          'volume_capabilities[0].access_mode MULTI_NODE_READER_ONLY is not supported: PMEM volumes are local to one node; allowed: SINGLE_NODE_WRITER, SINGLE_NODE_READER_ONLY, SINGLE_NODE_SINGLE_WRITER, SINGLE_NODE_MULTI_WRITER',
      });
      expect(await failure(call.capacity(tc.csi, { parameters: { usage: 'Turbo' } }))).toEqual({
        code: 'INVALID_ARGUMENT',
        details:
          'invalid StorageClass parameters: parameter "usage": "Turbo" is not supported; allowed values: AppDirect, FileIO',
      });
    });
  });

  describe('ValidateVolumeCapabilities', () => {
    let id: string;
    beforeEach(async () => {
      id = (await call.create(tc.csi, createRequest('pvc-v'))).volume?.volume_id ?? '';
    });

    it('confirms supported capabilities', async () => {
      const req = {
        volume_id: id,
        volume_capabilities: [mount, { block: {}, access_mode: { mode: 'SINGLE_NODE_READER_ONLY' as const } }],
        parameters: { usage: 'AppDirect' },
      };
      const res = await call.validate(tc.csi, req);
      expect(res.message).toBe('');
      expect(res.confirmed?.volume_capabilities).toHaveLength(2);
      expect(res.confirmed?.parameters).toEqual({ usage: 'AppDirect' });
    });

    it('does not confirm multi-node modes or bad parameters, and says why', async () => {
      expect(
        await call.validate(tc.csi, {
          volume_id: id,
          volume_capabilities: [{ mount: {}, access_mode: { mode: 'MULTI_NODE_MULTI_WRITER' } }],
        }),
      ).toEqual({
        confirmed: null,
        message:
          'volume_capabilities[0].access_mode MULTI_NODE_MULTI_WRITER is not supported: PMEM volumes are local to one node; allowed: SINGLE_NODE_WRITER, SINGLE_NODE_READER_ONLY, SINGLE_NODE_SINGLE_WRITER, SINGLE_NODE_MULTI_WRITER',
      });
      expect(
        await call.validate(tc.csi, { volume_id: id, volume_capabilities: [mount], parameters: { cacheSize: '1Gi' } }),
      ).toEqual({
        confirmed: null,
        message:
          'invalid StorageClass parameters: parameter "cacheSize" is not supported: cache persistency was removed; omit it and use persistencyModel "normal" (or no persistencyModel)',
      });
    });

    it('answers NOT_FOUND for unknown volumes and INVALID_ARGUMENT for missing fields', async () => {
      expect(await failure(call.validate(tc.csi, { volume_id: 'nope', volume_capabilities: [mount] }))).toEqual({
        code: 'NOT_FOUND',
        details: 'volume "nope" does not exist',
      });
      expect(await failure(call.validate(tc.csi, { volume_id: '', volume_capabilities: [mount] }))).toEqual({
        code: 'INVALID_ARGUMENT',
        details: 'volume_id is required',
      });
      expect(await failure(call.validate(tc.csi, { volume_id: id, volume_capabilities: [] }))).toEqual({
        code: 'INVALID_ARGUMENT',
        details: 'volume_capabilities is required: give at least one capability',
      });
    });
  });

  describe('ControllerGetVolume', () => {
    it('returns the volume and its condition, abnormal while its node is unavailable', async () => {
      const created = await call.create(tc.csi, createRequest('pvc-g'));
      const id = created.volume?.volume_id ?? '';
      expect(await call.get(tc.csi, id)).toEqual({
        volume: created.volume,
        status: { published_node_ids: [], volume_condition: { abnormal: false, message: 'on node "n2"' } },
      });
      await n1.renew();
      const expiry = tc.controller.status().nodes.find((n) => n.nodeId === 'n2')?.leaseExpiresAt;
      tc.clock.advance(30_000);
      expect((await call.get(tc.csi, id)).status?.volume_condition).toEqual({
        abnormal: true,
        message: `node "n2" that holds the volume is not available (the lease expired at ${expiry} without renewal)`,
      });
    });

    it('answers NOT_FOUND for unknown volumes, UNAVAILABLE when a node could hold it', async () => {
      expect(await failure(call.get(tc.csi, 'nope'))).toEqual({
        code: 'NOT_FOUND',
        details: 'volume "nope" does not exist',
      });
      await n1.unregister();
      expect(await failure(call.get(tc.csi, 'nope'))).toEqual({
        code: 'UNAVAILABLE',
        details:
          'volume "nope" is not known (yet): node "n1" (the node unregistered (shut down)) is not available and could hold it; retry',
      });
    });
  });

  describe('capabilities and identity', () => {
    it('advertises the controller capabilities', async () => {
      const res = await call.capabilities(tc.csi);
      expect(res.capabilities.map((c) => c.rpc?.type)).toEqual([
        'CREATE_DELETE_VOLUME',
        'LIST_VOLUMES',
        'GET_CAPACITY',
        'GET_VOLUME',
        'VOLUME_CONDITION',
        'SINGLE_NODE_MULTI_WRITER',
        'EXPAND_VOLUME',
      ]);
    });

    it('answers UNIMPLEMENTED for what it does not offer', async () => {
      const c = tc.csi;
      const publish = unary<csi.ControllerPublishVolumeRequest, csi.ControllerPublishVolumeResponse__Output>(
        c,
        c.ControllerPublishVolume,
        { volume_id: 'v', node_id: 'n1' },
        { timeoutMs: 5000 },
      );
      expect(await failure(publish)).toEqual({
        code: 'UNIMPLEMENTED',
        details: 'Controller.ControllerPublishVolume is not implemented by this driver',
      });
    });

    it('identifies the plugin and is ready', async () => {
      const id = tc.identity;
      const timeout = { timeoutMs: 5000 };
      expect(
        await unary<csi.GetPluginInfoRequest, csi.GetPluginInfoResponse__Output>(id, id.GetPluginInfo, {}, timeout),
      ).toEqual({
        name: 'pmem-csi.intel.com',
        vendor_version: '1.2.3',
        manifest: {},
      });
      const caps = await unary<csi.GetPluginCapabilitiesRequest, csi.GetPluginCapabilitiesResponse__Output>(
        id,
        id.GetPluginCapabilities,
        {},
        timeout,
      );
      expect(caps.capabilities.map((c) => c.service?.type ?? `volume_expansion ${c.volume_expansion?.type}`)).toEqual([
        'CONTROLLER_SERVICE',
        'VOLUME_ACCESSIBILITY_CONSTRAINTS',
        'volume_expansion ONLINE',
      ]);
      expect(await unary<csi.ProbeRequest, csi.ProbeResponse__Output>(id, id.Probe, {}, timeout)).toEqual({
        ready: { value: true },
      });
    });
  });
});

describe('a controller with another driver name', () => {
  it('uses <driver>/node as the topology key', async () => {
    const tc = await startTestController({ driverName: 'pmem.example.com' });
    const node = await startScriptedNode(tc, { nodeId: 'n1' });
    try {
      const res = await call.create(tc.csi, createRequest('pvc-1'));
      expect(res.volume?.accessible_topology).toEqual([{ segments: { 'pmem.example.com/node': 'n1' } }]);
      const segment = { accessible_topology: { segments: { 'pmem.example.com/node': 'n1' } } };
      // The controller asks the node for its capacity right after the create (placement/capacity-refresh.ts).
      expect((await call.capacity(tc.csi, segment)).available_capacity).toBe(String(9 * GiB));
      await node.renew(); // renewals carry the same truth
      expect((await call.capacity(tc.csi, segment)).available_capacity).toBe(String(9 * GiB));
    } finally {
      await node.close();
      await tc.stop();
    }
  });
});
