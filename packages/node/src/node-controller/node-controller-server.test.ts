// The node-controller service over real gRPC on a unix socket, with the fake device manager: every
// RPC's success and error paths, asserted by exact code and message.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { volumeIdForName } from '@pmem-csi/api';
import type { CreateDeviceRequest, DeviceCallOptions, PmemDeviceInfo } from '../device/device-manager.js';
import { FakeDeviceManager } from '../device/fake.js';
import { readVolumeState } from '../state/state-loader.js';
import {
  blockCapability,
  call,
  mountCapability,
  startTestNode,
  testClients,
  TEST_DRIVER,
  TEST_NODE,
  type TestClients,
  type TestNode,
} from '../testing/test-node.js';
import { GiB, MiB, type csi } from '@pmem-csi/csi';

/** A fake whose creates wait for `release()` (to hold a volume's lock) or fail once on demand. */
class GatedFake extends FakeDeviceManager {
  #gate: Promise<void> | undefined;
  #open: (() => void) | undefined;
  failNext: Error | undefined;

  hold(): void {
    this.#gate = new Promise((r) => (this.#open = r));
  }

  release(): void {
    this.#open?.();
    this.#gate = undefined;
  }

  override async createDevice(req: CreateDeviceRequest, options?: DeviceCallOptions): Promise<PmemDeviceInfo> {
    await this.#gate;
    const fail = this.failNext;
    this.failNext = undefined;
    if (fail) throw fail;
    return super.createDevice(req, options);
  }
}

function createRequest(
  name: string,
  required = 64 * MiB,
  extra: Partial<csi.CreateVolumeRequest> = {},
): csi.CreateVolumeRequest {
  return {
    name,
    capacity_range: { required_bytes: String(required) },
    volume_capabilities: [mountCapability()],
    parameters: {},
    ...extra,
  };
}

describe('node-controller service (fake devices, real gRPC)', () => {
  let dir: string;
  let dm: GatedFake;
  let node: TestNode;
  let c: TestClients;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-nc-'));
    dm = new GatedFake({ totalSize: GiB, granularity: 4 * MiB });
    await dm.setup();
    node = await startTestNode({ dm, dir });
    c = testClients(node.address);
  });

  afterAll(async () => {
    c.close();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    dm.release();
    dm.inUse.clear();
    for (const d of await dm.listDevices()) await dm.deleteDevice(d.volumeId, false);
    for (const r of await node.deps.state.list()) await node.deps.state.delete(r.volumeId);
  });

  const create = (req: csi.CreateVolumeRequest): Promise<csi.CreateVolumeResponse__Output> =>
    call(c.controller, c.controller.CreateVolume, req);
  const del = (id: string): Promise<csi.DeleteVolumeResponse__Output> =>
    call(c.controller, c.controller.DeleteVolume, { volume_id: id });

  describe('CreateVolume', () => {
    it('creates a volume: deterministic id, rounded size, volume context, topology, record', async () => {
      const res = await create(createRequest('pvc-1', 10 * MiB, { parameters: { eraseafter: 'false' } }));
      const id = volumeIdForName('pvc-1');
      expect(res.volume).toEqual({
        volume_id: id,
        capacity_bytes: String(12 * MiB),
        volume_context: {
          eraseafter: 'false',
          kataContainers: 'false',
          usage: 'AppDirect',
          name: 'pvc-1',
          deviceMode: 'fake',
        },
        accessible_topology: [{ segments: { [`${TEST_DRIVER}/node`]: TEST_NODE } }],
        content_source: null,
      });
      expect(await node.deps.state.get(id)).toMatchObject({
        volumeId: id,
        name: 'pvc-1',
        size: 10 * MiB,
        deviceMode: 'fake',
        parameters: { eraseafter: 'false', kataContainers: 'false', usage: 'AppDirect' },
      });
    });

    it('is idempotent: the same name and a compatible size return the same volume', async () => {
      const first = await create(createRequest('pvc-2'));
      const again = await create(
        createRequest('pvc-2', 60 * MiB, {
          capacity_range: { required_bytes: String(60 * MiB), limit_bytes: String(64 * MiB) },
        }),
      );
      expect(again.volume).toEqual(first.volume);
      expect(await dm.listDevices()).toHaveLength(1);
    });

    it('same name, incompatible size → ALREADY_EXISTS naming both sizes', async () => {
      await create(createRequest('pvc-3'));
      await expect(create(createRequest('pvc-3', 128 * MiB))).rejects.toMatchObject({
        code: grpc.status.ALREADY_EXISTS,
        details: `volume "pvc-3" (id ${volumeIdForName('pvc-3')}) already exists, but it has ${64 * MiB} bytes; the request asks for at least ${128 * MiB} bytes`,
      });
    });

    it('same name, other usage → ALREADY_EXISTS', async () => {
      await create(createRequest('pvc-4'));
      await expect(create(createRequest('pvc-4', 64 * MiB, { parameters: { usage: 'FileIO' } }))).rejects.toMatchObject(
        {
          code: grpc.status.ALREADY_EXISTS,
          details: `volume "pvc-4" (id ${volumeIdForName('pvc-4')}) already exists, but it has usage "AppDirect", not "FileIO"`,
        },
      );
    });

    it('no space → RESOURCE_EXHAUSTED with the device manager message, and no record left', async () => {
      const err = await create(createRequest('pvc-big', 2 * GiB)).catch((e: grpc.ServiceError) => e);
      expect(err).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
      expect((err as grpc.ServiceError).details).toContain(`${GiB} bytes`);
      expect(await node.deps.state.list()).toEqual([]);
    });

    it('a failed device creation rolls the record back', async () => {
      dm.failNext = new Error('disk on fire');
      await expect(create(createRequest('pvc-fail'))).rejects.toMatchObject({
        code: grpc.status.INTERNAL,
        details: 'internal error: disk on fire',
      });
      expect(await node.deps.state.get(volumeIdForName('pvc-fail'))).toBeUndefined();
      expect(await readVolumeState(join(dir, 'volumes'))).toEqual({ records: [], corrupt: [] });
    });

    it('the rounded size above limit_bytes → OUT_OF_RANGE, nothing left behind', async () => {
      await expect(
        create(
          createRequest('pvc-lim', 5 * MiB, {
            capacity_range: { required_bytes: String(5 * MiB), limit_bytes: String(6 * MiB) },
          }),
        ),
      ).rejects.toMatchObject({
        code: grpc.status.OUT_OF_RANGE,
        details: `volume "pvc-lim" cannot be created for capacity_range.required_bytes ${5 * MiB}: its device would have ${8 * MiB} bytes (rounded up to the allocation unit of fake mode), above capacity_range.limit_bytes ${6 * MiB}`,
      });
      expect(await dm.listDevices()).toEqual([]);
      expect(await node.deps.state.list()).toEqual([]);
    });

    it('no capacity_range → the 1 GiB default', async () => {
      const res = await create({ name: 'pvc-default', volume_capabilities: [blockCapability()] });
      expect(res.volume?.capacity_bytes).toBe(String(GiB));
    });

    it.each([
      [{ name: '' }, 'name is required'],
      [{ volume_capabilities: [] }, 'volume_capabilities is required: give at least one capability'],
      [
        { parameters: { eraseafter: 'maybe' } },
        'invalid StorageClass parameters: parameter "eraseafter": "maybe" is not a boolean; allowed values: true, false',
      ],
      [
        { parameters: { colour: 'red' } },
        'invalid StorageClass parameters: parameter "colour" is not allowed in StorageClass parameters; allowed keys: eraseafter, kataContainers, usage, persistencyModel, csi.storage.k8s.io/*',
      ],
      [
        { capacity_range: { required_bytes: '10', limit_bytes: '5' } },
        'capacity_range.limit_bytes (5 bytes) must not be smaller than capacity_range.required_bytes (10 bytes)',
      ],
      [
        { volume_capabilities: [mountCapability('', [], 'MULTI_NODE_MULTI_WRITER')] },
        'volume_capabilities[0].access_mode MULTI_NODE_MULTI_WRITER is not supported: PMEM volumes are local to one node; allowed: SINGLE_NODE_WRITER, SINGLE_NODE_READER_ONLY, SINGLE_NODE_SINGLE_WRITER, SINGLE_NODE_MULTI_WRITER',
      ],
      [
        { volume_capabilities: [mountCapability('btrfs')] },
        'volume_capabilities[0].mount.fs_type "btrfs" is not supported; allowed: ext4, xfs (or empty for the default)',
      ],
      [
        { volume_content_source: { snapshot: { snapshot_id: 's' } } },
        'volume_content_source (snapshot) is not supported: this driver cannot create volumes from snapshots or clone volumes; omit volume_content_source',
      ],
    ] as Array<[Partial<csi.CreateVolumeRequest>, string]>)(
      'invalid request %j → INVALID_ARGUMENT',
      async (extra, details) => {
        await expect(create({ ...createRequest('pvc-bad'), ...extra })).rejects.toMatchObject({
          code: grpc.status.INVALID_ARGUMENT,
          details,
        });
      },
    );

    it('a requisite topology without this node → RESOURCE_EXHAUSTED', async () => {
      const req = createRequest('pvc-topo', 64 * MiB, {
        accessibility_requirements: { requisite: [{ segments: { [`${TEST_DRIVER}/node`]: 'node-2' } }] },
      });
      await expect(create(req)).rejects.toMatchObject({
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: `accessibility_requirements.requisite does not include this node (${TEST_DRIVER}/node=${TEST_NODE})`,
      });
    });

    it('a concurrent call for the same name → ABORTED', async () => {
      dm.hold();
      const first = create(createRequest('pvc-conc'));
      await new Promise((r) => setTimeout(r, 200));
      await expect(create(createRequest('pvc-conc'))).rejects.toMatchObject({
        code: grpc.status.ABORTED,
        details: `an operation on volume "${volumeIdForName('pvc-conc')}" is already in progress`,
      });
      dm.release();
      expect((await first).volume?.volume_id).toBe(volumeIdForName('pvc-conc'));
    });

    it('a device without a record (state lost) is adopted when compatible', async () => {
      const id = volumeIdForName('pvc-orphan');
      await dm.createDevice({ volumeId: id, size: 64 * MiB });
      const res = await create(createRequest('pvc-orphan'));
      expect(res.volume?.volume_id).toBe(id);
      expect(await node.deps.state.get(id)).toMatchObject({ name: 'pvc-orphan', size: 64 * MiB });
    });
  });

  describe('DeleteVolume', () => {
    it('unknown id → OK', async () => {
      await expect(del('nope-0')).resolves.toEqual({});
    });

    it('volume_id missing → INVALID_ARGUMENT', async () => {
      await expect(del('')).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'volume_id is required',
      });
    });

    it('eraseafter=true (default) erases the whole device, then device and record are gone', async () => {
      const v = (await create(createRequest('pvc-del'))).volume!;
      await del(v.volume_id);
      expect(dm.erasures.at(-1)).toEqual({ volumeId: v.volume_id, bytes: 64 * MiB });
      expect(await dm.listDevices()).toEqual([]);
      expect(await node.deps.state.get(v.volume_id)).toBeUndefined();
      await expect(del(v.volume_id)).resolves.toEqual({});
    });

    it('eraseafter=false zeroes only the first 4 KiB', async () => {
      const v = (await create(createRequest('pvc-del2', 64 * MiB, { parameters: { eraseafter: 'false' } }))).volume!;
      await del(v.volume_id);
      expect(dm.erasures.at(-1)).toEqual({ volumeId: v.volume_id, bytes: 4096 });
    });

    it('device busy → FAILED_PRECONDITION, volume and record kept', async () => {
      const v = (await create(createRequest('pvc-busy'))).volume!;
      dm.inUse.add(v.volume_id);
      await expect(del(v.volume_id)).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: `device /dev/fake/${v.volume_id} of volume "${v.volume_id}" is in use (mounted or open)`,
      });
      expect(await node.deps.state.get(v.volume_id)).toBeDefined();
      expect(await dm.listDevices()).toHaveLength(1);
    });
  });

  describe('ListVolumes', () => {
    it('pages through all volumes with next_token; an unknown token → ABORTED', async () => {
      const names = ['a1', 'a2', 'a3', 'a4', 'a5'];
      for (const n of names) await create(createRequest(n, 4 * MiB));
      const seen: string[] = [];
      let token = '';
      let pages = 0;
      do {
        const res = await call(c.controller, c.controller.ListVolumes, { max_entries: 2, starting_token: token });
        expect(res.entries.length).toBeLessThanOrEqual(2);
        seen.push(...res.entries.map((e) => e.volume!.volume_context['name']!));
        token = res.next_token;
        pages++;
      } while (token !== '');
      expect(pages).toBe(3);
      expect(seen.sort()).toEqual(names);
      const all = await call(c.controller, c.controller.ListVolumes, {});
      expect(all.entries).toHaveLength(5);
      expect(all.next_token).toBe('');
      await expect(
        call(c.controller, c.controller.ListVolumes, { starting_token: 'invalid-token' }),
      ).rejects.toMatchObject({
        code: grpc.status.ABORTED,
        details:
          'starting_token "invalid-token" is not a token of this node\'s ListVolumes; start again without a token',
      });
      await expect(call(c.controller, c.controller.ListVolumes, { max_entries: -1 })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'max_entries must not be negative, got -1',
      });
    });

    it('lists neither ephemeral volumes nor records without a device', async () => {
      await create(createRequest('b1', 4 * MiB));
      await node.deps.state.put({
        volumeId: 'csi-eph',
        name: 'csi-eph',
        size: 4 * MiB,
        deviceMode: 'fake',
        parameters: {},
        createdAt: new Date().toISOString(),
        ephemeral: true,
      });
      await dm.createDevice({ volumeId: 'csi-eph', size: 4 * MiB });
      await node.deps.state.put({
        volumeId: 'in-flight',
        name: 'x',
        size: 4 * MiB,
        deviceMode: 'fake',
        parameters: {},
        createdAt: new Date().toISOString(),
      });
      const res = await call(c.controller, c.controller.ListVolumes, {});
      expect(res.entries.map((e) => e.volume!.volume_id)).toEqual([volumeIdForName('b1')]);
      await expect(del('csi-eph')).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: 'volume csi-eph is an ephemeral inline volume; it is deleted by NodeUnpublishVolume, not DeleteVolume',
      });
    });
  });

  describe('GetCapacity, ValidateVolumeCapabilities, capabilities', () => {
    it('GetCapacity reports available bytes and the largest volume', async () => {
      await create(createRequest('c1', 100 * MiB));
      const cap = await dm.getCapacity();
      const res = await call(c.controller, c.controller.GetCapacity, { volume_capabilities: [mountCapability()] });
      expect(res).toMatchObject({
        available_capacity: String(cap.available),
        maximum_volume_size: { value: String(cap.maxVolumeSize) },
      });
      const other = await call(c.controller, c.controller.GetCapacity, {
        accessible_topology: { segments: { [`${TEST_DRIVER}/node`]: 'node-2' } },
      });
      expect(other).toMatchObject({ available_capacity: '0', maximum_volume_size: { value: '0' } });
      await expect(
        call(c.controller, c.controller.GetCapacity, { parameters: { usage: 'Bogus' } }),
      ).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details:
          'invalid StorageClass parameters: parameter "usage": "Bogus" is not supported; allowed values: AppDirect, FileIO',
      });
    });

    it('ValidateVolumeCapabilities confirms supported capabilities and explains unsupported ones', async () => {
      const v = (await create(createRequest('v1'))).volume!;
      const ok = await call(c.controller, c.controller.ValidateVolumeCapabilities, {
        volume_id: v.volume_id,
        volume_capabilities: [mountCapability('xfs'), blockCapability()],
      });
      expect(ok.confirmed?.volume_capabilities).toHaveLength(2);
      expect(ok.message).toBe('');
      const bad = await call(c.controller, c.controller.ValidateVolumeCapabilities, {
        volume_id: v.volume_id,
        volume_capabilities: [mountCapability('', [], 'MULTI_NODE_READER_ONLY')],
      });
      expect(bad).toMatchObject({
        confirmed: null,
        message: expect.stringContaining('MULTI_NODE_READER_ONLY is not supported'),
      });
      await expect(
        call(c.controller, c.controller.ValidateVolumeCapabilities, {
          volume_id: 'nope-1',
          volume_capabilities: [blockCapability()],
        }),
      ).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume nope-1 does not exist on node ${TEST_NODE}`,
      });
      await expect(
        call(c.controller, c.controller.ValidateVolumeCapabilities, { volume_id: v.volume_id }),
      ).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'volume_capabilities is required: give at least one capability',
      });
      await expect(
        call(c.controller, c.controller.ValidateVolumeCapabilities, { volume_capabilities: [blockCapability()] }),
      ).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'volume_id is required',
      });
    });

    it('ControllerGetCapabilities includes EXPAND_VOLUME in fake mode', async () => {
      const res = await call(c.controller, c.controller.ControllerGetCapabilities, {});
      expect(res.capabilities.map((x) => x.rpc?.type)).toEqual([
        'CREATE_DELETE_VOLUME',
        'LIST_VOLUMES',
        'GET_CAPACITY',
        'SINGLE_NODE_MULTI_WRITER',
        'EXPAND_VOLUME',
      ]);
    });

    it('ControllerExpandVolume grows the device and the record; unknown → NOT_FOUND', async () => {
      const v = (await create(createRequest('e1', 8 * MiB))).volume!;
      const res = await call(c.controller, c.controller.ControllerExpandVolume, {
        volume_id: v.volume_id,
        capacity_range: { required_bytes: String(20 * MiB) },
        volume_capability: mountCapability(),
      });
      expect(res).toEqual({ capacity_bytes: String(20 * MiB), node_expansion_required: true });
      expect((await node.deps.state.get(v.volume_id))?.size).toBe(20 * MiB);
      const list = await call(c.controller, c.controller.ListVolumes, {});
      expect(list.entries[0]?.volume?.capacity_bytes).toBe(String(20 * MiB));
      await expect(
        call(c.controller, c.controller.ControllerExpandVolume, {
          volume_id: 'nope-2',
          capacity_range: { required_bytes: '1' },
        }),
      ).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume nope-2 does not exist on node ${TEST_NODE}`,
      });
      await expect(
        call(c.controller, c.controller.ControllerExpandVolume, { volume_id: v.volume_id }),
      ).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'capacity_range is required',
      });
    });

    it('ControllerExpandVolume: a size the volume has → OK with its size (never shrinks); a block volume needs no node expansion', async () => {
      const v = (await create(createRequest('e2', 8 * MiB))).volume!;
      const expand = (
        required: number,
        cap?: csi.VolumeCapability,
      ): Promise<csi.ControllerExpandVolumeResponse__Output> =>
        call(c.controller, c.controller.ControllerExpandVolume, {
          volume_id: v.volume_id,
          capacity_range: { required_bytes: String(required) },
          volume_capability: cap,
        });
      expect(await expand(4 * MiB, mountCapability())).toEqual({
        capacity_bytes: String(8 * MiB),
        node_expansion_required: true,
      });
      expect(await expand(12 * MiB, blockCapability())).toEqual({
        capacity_bytes: String(12 * MiB),
        node_expansion_required: false,
      });
      expect(await expand(8 * MiB)).toEqual({ capacity_bytes: String(12 * MiB), node_expansion_required: true });
      expect((await dm.getDevice(v.volume_id)).size).toBe(12 * MiB);
    });

    it('ControllerExpandVolume: no room in the pool → OUT_OF_RANGE naming the growth, the free bytes and the node; nothing changes', async () => {
      const v = (await create(createRequest('e3', 8 * MiB))).volume!;
      const before = await dm.getCapacity();
      await expect(
        call(c.controller, c.controller.ControllerExpandVolume, {
          volume_id: v.volume_id,
          capacity_range: { required_bytes: String(2 * GiB) },
        }),
      ).rejects.toMatchObject({
        code: grpc.status.OUT_OF_RANGE,
        details: `volume ${v.volume_id} on node ${TEST_NODE} cannot grow by ${2 * GiB - 8 * MiB} bytes (from ${8 * MiB} to ${2 * GiB} bytes): only ${GiB - 8 * MiB} bytes are free for it on node ${TEST_NODE}, so it can grow to at most ${GiB} bytes`,
      });
      expect((await dm.getDevice(v.volume_id)).size).toBe(8 * MiB);
      expect((await node.deps.state.get(v.volume_id))?.size).toBe(8 * MiB);
      expect(await dm.getCapacity()).toEqual(before);
    });

    it('ControllerExpandVolume: limit_bytes below the size the volume has → OUT_OF_RANGE; MULTI_NODE capability → INVALID_ARGUMENT', async () => {
      const v = (await create(createRequest('e4', 16 * MiB))).volume!;
      await expect(
        call(c.controller, c.controller.ControllerExpandVolume, {
          volume_id: v.volume_id,
          capacity_range: { required_bytes: String(4 * MiB), limit_bytes: String(8 * MiB) },
        }),
      ).rejects.toMatchObject({
        code: grpc.status.OUT_OF_RANGE,
        details: `volume ${v.volume_id} on node ${TEST_NODE} already has ${16 * MiB} bytes, more than capacity_range.limit_bytes ${8 * MiB}; volumes never shrink`,
      });
      await expect(
        call(c.controller, c.controller.ControllerExpandVolume, {
          volume_id: v.volume_id,
          capacity_range: { required_bytes: String(32 * MiB) },
          volume_capability: mountCapability('', [], 'MULTI_NODE_MULTI_WRITER'),
        }),
      ).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details:
          'volume_capability.access_mode MULTI_NODE_MULTI_WRITER is not supported: PMEM volumes are local to one node; allowed: SINGLE_NODE_WRITER, SINGLE_NODE_READER_ONLY, SINGLE_NODE_SINGLE_WRITER, SINGLE_NODE_MULTI_WRITER',
      });
      expect((await dm.getDevice(v.volume_id)).size).toBe(16 * MiB);
    });

    it('unsupported RPCs → UNIMPLEMENTED', async () => {
      await expect(
        call(c.controller, c.controller.ControllerPublishVolume, { volume_id: 'x', node_id: TEST_NODE }),
      ).rejects.toMatchObject({
        code: grpc.status.UNIMPLEMENTED,
        details: 'NodeController.ControllerPublishVolume is not implemented by this driver',
      });
    });
  });
});
