// The direct device mode of the real-PMEM guest suite (device/pmem.guest.test.ts, QEMU tier only:
// two emulated 4 GiB NVDIMMs = two regions, root, ndctl, udev, ext4/xfs with DAX). Boot 1 starts
// from blank NVDIMMs: label initialisation, the DeviceManager contract in the form direct mode can
// keep (sizes are "at least", see below), fragmentation and maxVolumeSize, foreign namespaces,
// sector mode (FileIO), erase, the CSI node service, and leaves volumes with data for boot 2, which
// checks them after the reboot.
//
// Direct mode cannot give exact sizes: a namespace of raw size R (a multiple of the region
// alignment) keeps its page metadata (~R/64) on the PMEM, so the usable size is whatever the kernel
// reports, >= the request; and `available` is the usable part of the free space, which is not
// linear in the namespaces made. So the DeviceManager contract runs here with sizes: 'atLeast'
// ("at least" the request, capacity restored exactly after delete), and the direct-specific cases
// below check the arithmetic that can be checked.
//
// Issue 32: two driver instances (two driver names) on the same real regions — the second places its
// volumes only where the first has none, neither lists, finds or deletes the other's, a third finds
// no region left and does not start; after the power-off (boot 2) the marks are still there.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { volumeIdForName } from '@pmem-csi/api';
import { GiB, MiB, FailedPreconditionError, type csi } from '@pmem-csi/csi';
import type { LogFields } from '@pmem-csi/runtime';
import {
  DeviceExistsError,
  DeviceInUseError,
  DeviceNotFoundError,
  NotEnoughSpaceError,
  type PmemDeviceInfo,
} from '../device/device-manager.js';
import { directAlignment, isVolumeIdName, maxVolumeSize, usableInExtent } from '../device/direct-layout.js';
import { DirectDeviceManager } from '../device/direct.js';
import { labelLessNamespace, type NdNamespace, type NdRegion } from '../device/ndctl.js';
import { PmemOwner, namespaceMark } from '../device/ownership.js';
import { alignDown } from '../device/sizes.js';
import { deviceManagerContract, type ContractFixture } from '../device/testing/contract.js';
import { ephemeralVolumeId } from '../volumes/volumes.js';
import {
  BLANK_REGIONS,
  BOOT,
  MARK,
  RESULTS,
  SLOW,
  asJson,
  boot1,
  capturingLogger,
  createVolume,
  deleteVolume,
  expectBlankRegion,
  guestLogger,
  holdDevice,
  isDaxFile,
  isZero,
  liveNamespaces,
  mountOptions,
  ndctl,
  PMEM_KIND,
  PMEM_NAME,
  pmemRegions,
  publish,
  readRaw,
  rebootScenario,
  record,
  recordCall,
  rejection,
  runner,
  stage,
  startGuestDriver,
  unstage,
  writeRaw,
  writeSynced,
  type Csi,
} from './guest-kit.js';
import type { ErasedSpace, GuestModeSuite } from './guest-mode.js';
import { kataCsiCase } from './guest-kata-csi.js';
import { call, mountCapability, TEST_NODE } from './test-node.js';

const PERSIST_FILE = join(RESULTS, 'persist-direct.json');
const SMALL = 64 * MiB;
const log = guestLogger('direct');

function newDirect(): DirectDeviceManager {
  return new DirectDeviceManager({ runner, log });
}

const vid = (name: string): string => volumeIdForName(name);

// ---- boot 1: the device manager -----------------------------------------------------------------

function deviceCases(): void {
  boot1(`direct mode on blank ${PMEM_NAME}`, () => {
    let dm: DirectDeviceManager;
    /** A foreign namespace filling region1, so that every volume lands in region0 (one pool, as the cases assume). */
    let filler: string | undefined;

    beforeAll(() => {
      dm = newDirect();
    });

    afterAll(async () => {
      for (const d of await dm.listDevices()) await dm.deleteDevice(d.volumeId, false).catch(() => undefined);
      if (filler !== undefined) await ndctl.destroyNamespace(filler).catch(() => undefined);
    }, SLOW);

    it(
      `two ${BLANK_REGIONS} regions; setup() ${PMEM_KIND === 'cxl' ? 'keeps' : 'initialises'} their labels; then all of each region is free`,
      async () => {
        const fresh = await pmemRegions();
        expect(fresh.map((r) => r.dev).sort()).toEqual(['region0', 'region1']);
        for (const r of fresh) expectBlankRegion(await ndctl.listNamespaces({ region: r.dev }));
        await dm.setup();
        const regions = await record('ndctl-list-BRDi-labelled.json', () => pmemRegions());
        for (const r of regions) {
          expect(r.availableSize).toBe(r.size);
          expect(r.maxAvailableExtent).toBe(r.size);
          expect(labelLessNamespace(await ndctl.listNamespaces({ region: r.dev }))).toBeUndefined();
        }
        await record('ndctl-list-Ni-labelled-idle.json', () => ndctl.listNamespaces());
        expect(await dm.listDevices()).toEqual([]);
      },
      SLOW,
    );

    it(
      'capacity of blank regions: managed = total, maxVolumeSize from the largest extent minus metadata',
      async () => {
        const regions = await pmemRegions();
        const cap = await dm.getCapacity();
        const total = regions.reduce((s, r) => s + r.size, 0);
        expect(cap).toEqual({
          total,
          managed: total,
          available: regions.reduce((s, r) => s + usableInExtent(r, r.availableSize), 0),
          maxVolumeSize: maxVolumeSize(regions),
        });
        expect(cap.maxVolumeSize).toBeGreaterThan(regions[0]!.size * 0.97);
      },
      SLOW,
    );

    it(
      'a foreign namespace (not named like a volume id) is never listed, and fills region1',
      async () => {
        const r1 = (await pmemRegions()).find((r) => r.dev === 'region1')!;
        const ns = await recordCall('ndctl-create-namespace-foreign.json', 'create-namespace', () =>
          ndctl.createNamespace({
            region: 'region1',
            name: 'app-data',
            size: alignDown(r1.maxAvailableExtent, directAlignment(r1)),
            mode: 'fsdax',
            map: 'dev',
          }),
        );
        filler = ns.dev;
        expect(await dm.listDevices()).toEqual([]);
        expect((await pmemRegions()).find((r) => r.dev === 'region1')!.maxAvailableExtent).toBeLessThan(
          directAlignment(r1),
        );
      },
      SLOW,
    );

    describe('the DeviceManager contract, with "at least" sizes', () => {
      it(
        'create: an fsdax namespace of at least the size, with DAX; get and list return it',
        async () => {
          const id = vid('ct-create');
          const dev = await recordCall('ndctl-create-namespace-fsdax.json', 'create-namespace', () =>
            dm.createDevice({ volumeId: id, size: SMALL + 1 }),
          );
          try {
            expect(dev).toMatchObject({ volumeId: id, dax: true });
            expect(dev.path).toMatch(/^\/dev\/pmem0(\.\d+)?$/); // the region's first namespace is pmem0, later ones pmem0.N
            expect(dev.size).toBeGreaterThanOrEqual(SMALL + 1);
            expect(dev.size).toBeLessThan(SMALL + 1 + directAlignment((await pmemRegions())[0]!));
            expect(await dm.getDevice(id)).toEqual(dev);
            expect(await dm.listDevices()).toEqual([dev]);
            await record('ndctl-list-Ni-direct.json', () => ndctl.listNamespaces());
          } finally {
            await dm.deleteDevice(id, false);
          }
        },
        SLOW,
      );

      it(
        'duplicate → DeviceExistsError; unknown get → DeviceNotFoundError; unknown delete resolves',
        async () => {
          const id = vid('ct-dup');
          const dev = await dm.createDevice({ volumeId: id, size: SMALL });
          try {
            const cap = await dm.getCapacity();
            expect(await rejection(dm.createDevice({ volumeId: id, size: SMALL }))).toBeInstanceOf(DeviceExistsError);
            expect(await dm.getCapacity()).toEqual(cap);
            expect(await dm.getDevice(id)).toEqual(dev);
          } finally {
            await dm.deleteDevice(id, false);
          }
          expect(await rejection(dm.getDevice(vid('ct-unknown')))).toBeInstanceOf(DeviceNotFoundError);
          await expect(dm.deleteDevice(vid('ct-unknown'), true)).resolves.toBeUndefined();
        },
        SLOW,
      );

      it(
        'capacity: available shrinks by at least the size; delete restores it exactly',
        async () => {
          const id = vid('ct-cap');
          const before = await dm.getCapacity();
          const dev = await dm.createDevice({ volumeId: id, size: SMALL });
          const after = await dm.getCapacity();
          expect(after.available).toBeLessThanOrEqual(before.available - dev.size);
          expect(after.maxVolumeSize).toBeLessThanOrEqual(after.available);
          expect(after.total).toBe(before.total);
          await dm.deleteDevice(id, false);
          expect(await dm.getCapacity()).toEqual(before);
        },
        SLOW,
      );

      it(
        'a device in use cannot be deleted (DeviceInUseError) and stays intact',
        async () => {
          const id = vid('ct-busy');
          const dev = await dm.createDevice({ volumeId: id, size: SMALL });
          const release = await holdDevice(dev.path);
          try {
            for (const erase of [true, false])
              expect(await rejection(dm.deleteDevice(id, erase))).toBeInstanceOf(DeviceInUseError);
          } finally {
            await release();
          }
          expect(await dm.getDevice(id)).toEqual(dev);
          await dm.deleteDevice(id, false);
        },
        SLOW,
      );

      it(
        'a manager re-created (restart) sees the same devices and capacity',
        async () => {
          const id = vid('ct-restart');
          const dev = await dm.createDevice({ volumeId: id, size: SMALL });
          try {
            const dm2 = newDirect();
            await dm2.setup();
            expect(await dm2.listDevices()).toEqual([dev]);
            expect(await dm2.getCapacity()).toEqual(await dm.getCapacity());
          } finally {
            await dm.deleteDevice(id, false);
          }
        },
        SLOW,
      );

      it(
        'too large → NotEnoughSpaceError naming maxVolumeSize; maxVolumeSize itself fits',
        async () => {
          const big = vid('ct-big');
          const cap = await dm.getCapacity();
          const err = await rejection(dm.createDevice({ volumeId: big, size: cap.maxVolumeSize + 1 }));
          expect(err).toBeInstanceOf(NotEnoughSpaceError);
          expect((err as Error).message).toContain(`${cap.maxVolumeSize} bytes`);
          const dev = await dm.createDevice({ volumeId: big, size: cap.maxVolumeSize });
          try {
            expect(dev.size).toBeGreaterThanOrEqual(cap.maxVolumeSize);
            const full = await dm.getCapacity();
            expect(full.maxVolumeSize).toBeLessThan(SMALL);
            expect(await rejection(dm.createDevice({ volumeId: vid('ct-small'), size: SMALL }))).toBeInstanceOf(
              NotEnoughSpaceError,
            );
          } finally {
            await dm.deleteDevice(big, false);
          }
          expect(await dm.getCapacity()).toEqual(cap);
        },
        SLOW,
      );

      for (const erase of [true, false]) {
        it(
          `delete with erase=${erase} zeroes ${erase ? 'the whole namespace' : 'its first 4 KiB'} (re-created at the same place)`,
          async () => {
            const id = vid(`ct-erase-${erase}`);
            const dev = await dm.createDevice({ volumeId: id, size: SMALL });
            const offsets = [0, 4096, alignDown(dev.size / 2, 4096), dev.size - 4096];
            for (const off of offsets) await writeRaw(dev.path, off, MARK);
            await dm.deleteDevice(id, erase);
            const probe = vid(`ct-erase-probe-${erase}`);
            const again = await dm.createDevice({ volumeId: probe, size: dev.size });
            try {
              for (const off of offsets) {
                const block = await readRaw(again.path, off, 4096);
                if (erase || off === 0) expect(isZero(block)).toBe(true);
                else expect(block.equals(MARK)).toBe(true);
              }
            } finally {
              await dm.deleteDevice(probe, false);
            }
          },
          SLOW,
        );
      }

      it(
        'delete is idempotent, and a deleted id can be created again (CSI volume ids are deterministic)',
        async () => {
          const id = vid('ct-again');
          const first = await dm.createDevice({ volumeId: id, size: SMALL });
          await dm.deleteDevice(id, false);
          // ndctl destroy-namespace leaves an idle namespace (size 0) that keeps the volume's name.
          await expect(dm.deleteDevice(id, false)).resolves.toBeUndefined();
          expect(await rejection(dm.getDevice(id))).toBeInstanceOf(DeviceNotFoundError);
          const second = await dm.createDevice({ volumeId: id, size: SMALL });
          try {
            expect(second.size).toBe(first.size);
            expect(await dm.listDevices()).toEqual([second]);
          } finally {
            await dm.deleteDevice(id, false);
          }
        },
        SLOW,
      );

      it(
        'resize: not growing is a no-op, growing → Unimplemented',
        async () => {
          const id = vid('ct-resize');
          const dev = await dm.createDevice({ volumeId: id, size: SMALL });
          try {
            expect(await dm.resizeDevice(id, SMALL)).toEqual(dev);
            expect(await rejection(dm.resizeDevice(id, dev.size * 2))).toMatchObject({ kind: 'Unimplemented' });
          } finally {
            await dm.deleteDevice(id, false);
          }
        },
        SLOW,
      );

      it(
        '4 concurrent creates all succeed, distinct devices; deleting them restores the capacity',
        async () => {
          const ids = [0, 1, 2, 3].map((i) => vid(`ct-conc-${i}`));
          const before = await dm.getCapacity();
          const devs = await Promise.all(ids.map((volumeId) => dm.createDevice({ volumeId, size: SMALL })));
          expect(new Set(devs.map((d) => d.path)).size).toBe(4);
          expect((await dm.listDevices()).length).toBe(4);
          await Promise.all(ids.map((volumeId) => dm.deleteDevice(volumeId, false)));
          expect(await dm.getCapacity()).toEqual(before);
        },
        SLOW,
      );
    });

    it(
      'fragmentation: a hole between namespaces counts in available, not in maxVolumeSize',
      async () => {
        const before = await dm.getCapacity();
        const ids = ['frag-a', 'frag-b', 'frag-c'].map(vid);
        const devs: PmemDeviceInfo[] = [];
        for (const id of ids) devs.push(await dm.createDevice({ volumeId: id, size: GiB }));
        try {
          await dm.deleteDevice(ids[1]!, false);
          const r0 = (await record('ndctl-list-BRDi-fragmented.json', () => pmemRegions())).find(
            (r) => r.dev === 'region0',
          )!;
          expect(r0.maxAvailableExtent).toBeLessThan(r0.availableSize);
          const cap = await dm.getCapacity();
          expect(cap.maxVolumeSize).toBe(usableInExtent(r0, r0.maxAvailableExtent));
          expect(cap.available).toBe(usableInExtent(r0, r0.availableSize));
          // A volume that fits the free total but no single extent is refused, naming the real maximum.
          const tooBig = cap.maxVolumeSize + 64 * MiB;
          expect(tooBig).toBeLessThan(cap.available);
          const err = await rejection(dm.createDevice({ volumeId: vid('frag-big'), size: tooBig }));
          expect(err).toBeInstanceOf(NotEnoughSpaceError);
          expect((err as Error).message).toContain(`${cap.maxVolumeSize} bytes`);
          // The hole takes a volume of its size again.
          const hole = await dm.createDevice({ volumeId: ids[1]!, size: GiB });
          expect(hole.size).toBe(devs[1]!.size);
          expect((await pmemRegions()).find((r) => r.dev === 'region0')!.maxAvailableExtent).toBe(
            r0.availableSize - r0.maxAvailableExtent,
          );
        } finally {
          for (const id of ids) await dm.deleteDevice(id, false);
        }
        expect(await dm.getCapacity()).toEqual(before);
      },
      SLOW,
    );

    it(
      'usage FileIO: a sector-mode namespace without DAX',
      async () => {
        const id = vid('ct-sector');
        const dev = await recordCall('ndctl-create-namespace-sector.json', 'create-namespace', () =>
          dm.createDevice({ volumeId: id, size: SMALL, usage: 'FileIO' }),
        );
        try {
          expect(dev).toMatchObject({ volumeId: id, dax: false });
          expect(dev.path).toMatch(/^\/dev\/pmem0(\.\d+)?s$/);
          expect(dev.size).toBeGreaterThanOrEqual(SMALL);
          await record('ndctl-list-Ni-sector.json', () => ndctl.listNamespaces());
        } finally {
          await dm.deleteDevice(id, true);
        }
      },
      SLOW,
    );
  });
}

// ---- CSI node service on direct volumes: the cases only direct has ---------------------------

function csiCases(t: () => Csi): void {
  kataCsiCase(t);
  it(
    'ephemeral inline volume with a kubelet handle (68 bytes): a namespace under its 63-byte id, dax, removed by unpublish',
    async () => {
      const handle = `csi-${createHash('sha256').update('pod-uid/vol').digest('hex')}`;
      expect(Buffer.byteLength(handle)).toBe(68);
      const local = ephemeralVolumeId(handle);
      const target = join(t().dir, 'ephemeral');
      const context = { 'csi.storage.k8s.io/ephemeral': 'true', 'csi.storage.k8s.io/pod.name': 'pod', size: '64Mi' };
      await call(t().c.node, t().c.node.NodePublishVolume, {
        volume_id: handle,
        target_path: target,
        volume_capability: mountCapability('ext4'),
        volume_context: context,
      });
      const ns = (await ndctl.listNamespaces()).find((n) => n.name === local);
      expect(ns).toMatchObject({ mode: 'fsdax' });
      expect(await mountOptions(target)).toEqual(expect.arrayContaining([expect.stringMatching(/^dax(=always)?$/)]));
      await writeSynced(join(target, 'data'), randomBytes(64 * 1024));
      expect(await isDaxFile(join(target, 'data'))).toBe(true);
      const stats = await call(t().c.node, t().c.node.NodeGetVolumeStats, { volume_id: handle, volume_path: target });
      expect(stats.volume_condition?.abnormal).toBe(false);
      await call(t().c.node, t().c.node.NodeUnpublishVolume, { volume_id: handle, target_path: target });
      expect((await ndctl.listNamespaces()).filter((n) => n.name === local && n.size > 0)).toEqual([]);
    },
    SLOW,
  );

  it(
    'a growth → OUT_OF_RANGE naming the namespace size and lvm mode, the namespace, mount and data unchanged; a size it has → OK; NodeExpandVolume → UNIMPLEMENTED',
    async () => {
      const v = await createVolume(t(), { name: 'no-grow', size: 64 * MiB, fs: 'ext4' });
      const size = Number(v.capacity_bytes);
      const paths = { staging: join(t().dir, 'stage-no-grow'), target: join(t().dir, 'target-no-grow') };
      await stage(t(), v, 'ext4', paths.staging);
      await publish(t(), v, 'ext4', paths);
      const data = randomBytes(MiB);
      await writeSynced(join(paths.target, 'data'), data);
      const before = await statfs(paths.target);
      const expand = (required: number): Promise<csi.ControllerExpandVolumeResponse__Output> =>
        call(t().c.controller, t().c.controller.ControllerExpandVolume, {
          volume_id: v.volume_id,
          capacity_range: { required_bytes: String(required) },
          volume_capability: mountCapability('ext4'),
        });
      await expect(expand(size + 64 * MiB)).rejects.toMatchObject({
        code: grpc.status.OUT_OF_RANGE,
        details: `volume ${v.volume_id} on node ${TEST_NODE} is a direct-mode namespace of ${size} bytes and cannot grow (requested ${size + 64 * MiB} bytes); use lvm mode for volumes that grow`,
      });
      expect(await expand(size)).toEqual({ capacity_bytes: String(size), node_expansion_required: false });
      await expect(
        call(t().c.node, t().c.node.NodeExpandVolume, {
          volume_id: v.volume_id,
          volume_path: paths.target,
          capacity_range: { required_bytes: String(size + 64 * MiB) },
        }),
      ).rejects.toMatchObject({
        code: grpc.status.UNIMPLEMENTED,
        details: 'volumes cannot be expanded in device mode direct',
      });
      const ns = (await ndctl.listNamespaces()).find((n) => n.name === v.volume_id);
      expect(ns?.size).toBe(size);
      const after = await statfs(paths.target);
      expect(after.blocks * after.bsize).toBe(before.blocks * before.bsize);
      expect((await readFile(join(paths.target, 'data'))).equals(data)).toBe(true);
      await call(t().c.node, t().c.node.NodeUnpublishVolume, { volume_id: v.volume_id, target_path: paths.target });
      await unstage(t(), v.volume_id, paths.staging);
      await deleteVolume(t(), v.volume_id);
    },
    SLOW,
  );
}

/**
 * The namespace's space, read before DeleteVolume and after it through a namespace of the same size
 * made for the purpose (the same size again takes the same, lowest free, place in the region).
 */
async function erasedSpace(volumeId: string, eraseafter: boolean): Promise<ErasedSpace> {
  const dm = newDirect();
  const dev = await dm.getDevice(volumeId);
  return {
    written: () => readRaw(dev.path, 0, dev.size),
    left: async () => {
      const probe = vid(`erase-probe-${eraseafter}`);
      const again = await dm.createDevice({ volumeId: probe, size: dev.size });
      try {
        return await readRaw(again.path, 0, again.size);
      } finally {
        await dm.deleteDevice(probe, false);
      }
    },
  };
}

/** A FileIO volume is staged from a sector-mode namespace (/dev/pmemN.Ms). */
async function fileIoStaged(staging: string): Promise<void> {
  const src = await runner.run('findmnt', ['-n', '-o', 'SOURCE', '--mountpoint', staging]);
  expect(src.stdout.trim()).toMatch(/^\/dev\/pmem\d+(\.\d+)?s$/);
}

// ---- two driver instances on the same regions (issue 32) ----------------------------------------

/** Another node driver on this node: another PmemCSIDeployment, or a second install without the operator. */
const SECOND = 'second.pmem-csi.example'; // owner mark a99c7e08e1
/** The first one, pmem-csi.intel.com: newDirect() and the suites' node driver. */
const FIRST_MARK = '5c3f485886';
const REFUSED = 'region refused: its PMEM belongs to another PMEM-CSI driver, which this one never touches';
const HINT =
  "One driver manages a region's PMEM: keep this driver off this node (its node selector), or free the regions " +
  "by deleting the other driver's volumes, namespaces and volume groups there";

function newNamed(driverName: string, logName: string): { dm: DirectDeviceManager; lines: LogFields[] } {
  const { log: named, lines } = capturingLogger(logName);
  return { dm: new DirectDeviceManager({ runner, log: named, owner: new PmemOwner(driverName) }), lines };
}

const refusedRegions = (lines: readonly LogFields[]): unknown[] =>
  lines.filter((l) => l['msg'] === REFUSED).map((l) => [l['region'], l['owner'], l['ownerMark'], l['resources']]);

/** The live namespace of a volume. */
async function namespaceOf(volumeId: string): Promise<NdNamespace> {
  const ns = liveNamespaces(await ndctl.listNamespaces()).find((n) => n.name === volumeId);
  if (ns === undefined) throw new Error(`no namespace of ${volumeId}`);
  return ns;
}

const sizeOf = (regions: readonly NdRegion[]): number => regions.reduce((sum, r) => sum + r.size, 0);

function ownerCases(): void {
  boot1('two driver instances on the same regions (issue 32)', () => {
    it(
      `the second (${SECOND}) places its volume where the first has none; neither lists, finds or deletes the other's; each counts only its region; a third does not start`,
      async () => {
        const first = newDirect();
        await first.setup();
        expect((await pmemRegions()).every((r) => r.availableSize === r.size)).toBe(true); // the cases before cleaned up
        const A = vid('owner-first');
        const B = vid('owner-second');
        const a = await first.createDevice({ volumeId: A, size: GiB });
        const second = newNamed(SECOND, 'direct-second');
        try {
          const nsA = await namespaceOf(A);
          expect(namespaceMark(nsA)).toBe(FIRST_MARK);
          await second.dm.setup(); // the other region is free: it starts
          expect(refusedRegions(second.lines)).toEqual([
            [nsA.region, `the driver with owner mark ${FIRST_MARK}`, FIRST_MARK, [`namespace ${nsA.dev} "${A}"`]],
          ]);
          // Best fit alone would put it next to A: that region has the smaller free extent now.
          await second.dm.createDevice({ volumeId: B, size: SMALL });
          const nsB = await namespaceOf(B);
          expect(nsB.region).not.toBe(nsA.region);
          expect(namespaceMark(nsB)).toBe('a99c7e08e1');
          expect((await first.listDevices()).map((d) => d.volumeId)).toEqual([A]);
          expect((await second.dm.listDevices()).map((d) => d.volumeId)).toEqual([B]);
          await expect(second.dm.getDevice(A)).rejects.toThrow(new DeviceNotFoundError(`volume ${A} not found`));
          await second.dm.deleteDevice(A, true);
          expect(await first.getDevice(A)).toEqual(a);

          const regions = await pmemRegions();
          const regionA = regions.find((r) => r.dev === nsA.region)!;
          const regionB = regions.find((r) => r.dev === nsB.region)!;
          // The first stays in its region too: a volume that only the second's region could hold is refused.
          const big = maxVolumeSize([regionA]) + 512 * MiB;
          expect(big).toBeLessThanOrEqual(maxVolumeSize([regionB]));
          const bigId = vid('owner-too-big');
          await expect(first.createDevice({ volumeId: bigId, size: big })).rejects.toThrow(
            new NotEnoughSpaceError(
              `not enough PMEM for volume ${bigId} of ${big} bytes: the largest volume this node can create now is ${maxVolumeSize([regionA])} bytes`,
            ),
          );
          for (const [dm, own] of [
            [first, regionA],
            [second.dm, regionB],
          ] as const) {
            expect(await dm.getCapacity()).toEqual({
              maxVolumeSize: maxVolumeSize([own]),
              available: usableInExtent(own, own.availableSize),
              managed: own.size,
              total: sizeOf(regions),
            });
          }

          const third = newNamed('third.pmem-csi.example', 'direct-third');
          const claim = (r: NdRegion): string =>
            r.dev === regionA.dev
              ? `${r.dev} belongs to the driver with owner mark ${FIRST_MARK} (namespace ${nsA.dev} "${A}")`
              : `${r.dev} belongs to the driver with owner mark a99c7e08e1 (namespace ${nsB.dev} "${B}")`;
          await expect(third.dm.setup()).rejects.toThrow(
            new FailedPreconditionError(
              `no PMEM on this node is left for driver third.pmem-csi.example (owner mark a369d5e501): ${regions.map(claim).join('; ')}. ${HINT}`,
            ),
          );
          expect(liveNamespaces(await ndctl.listNamespaces()).map((n) => n.name)).toEqual(
            expect.arrayContaining([A, B]),
          );
        } finally {
          await second.dm.deleteDevice(B, false).catch(() => undefined);
          await first.deleteDevice(A, false);
        }
      },
      SLOW,
    );
  });
}

// ---- the DeviceManager contract, sizes 'atLeast' (region1 is filled so every case runs on region0) ----
function contract(): void {
  if (BOOT === '1') {
    const FILL = 'contract-fill';
    deviceManagerContract(
      `DirectDeviceManager on ${PMEM_NAME} (QEMU), sizes atLeast`,
      async (): Promise<ContractFixture> => {
        const dm = new DirectDeviceManager({
          runner,
          log,
          isOwnedName: (n) => isVolumeIdName(n) || n.startsWith('ct-'),
        });
        await dm.setup();
        const r1 = (await pmemRegions()).find((r) => r.dev === 'region1')!;
        const fill = await ndctl.createNamespace({
          region: 'region1',
          name: FILL,
          size: alignDown(r1.maxAvailableExtent, directAlignment(r1)),
          mode: 'fsdax',
          map: 'dev',
        });
        return {
          dm,
          reopen: () =>
            Promise.resolve(
              new DirectDeviceManager({ runner, log, isOwnedName: (n) => isVolumeIdName(n) || n.startsWith('ct-') }),
            ),
          hold: (device) => holdDevice(device.path),
          cleanup: async () => {
            for (const d of await dm.listDevices())
              if (d.volumeId.startsWith('ct-')) await dm.deleteDevice(d.volumeId, false).catch(() => undefined);
            await ndctl.destroyNamespace(fill.dev);
          },
        };
      },
      { volumeSize: 64 * MiB, granularity: 2 * MiB, readable: true, resize: false, sizes: 'atLeast', timeoutMs: SLOW },
    );
  }
}

// ---- reboot: boot 1 leaves volumes, boot 2 finds them ------------------------------------------

function reboot(): void {
  rebootScenario({
    persistFile: PERSIST_FILE,
    start: (dir) => startGuestDriver(dir, { deviceMode: 'direct', log }),
    snapshot: async () =>
      liveNamespaces(await record('ndctl-list-Ni-direct-persist.json', () => ndctl.listNamespaces())),
    unchanged: {
      name: 'ndctl shows the same namespaces as before the reboot (before any setup)',
      check: async (namespaces) => expect(asJson(liveNamespaces(await ndctl.listNamespaces()))).toEqual(namespaces),
    },
    device: 'namespace',
    dataCase: 'each volume stages again with its data, dax as before',
    afterData: {
      name: `the marks survived the power-off: a driver named ${SECOND} refuses the regions with the first's volumes and sees, deletes and changes none of them`,
      check: async (_g, volumes) => {
        const before = liveNamespaces(await ndctl.listNamespaces());
        const theirs = volumes.map((v) => before.find((n) => n.name === v.volumeId));
        expect(theirs.map((n) => (n === undefined ? 'missing' : namespaceMark(n)))).toEqual(
          volumes.map(() => FIRST_MARK),
        );
        const regions = await pmemRegions();
        const claimed = regions.filter((r) => theirs.some((n) => n?.region === r.dev));
        const free = regions.filter((r) => !claimed.includes(r));
        expect(claimed.length).toBeGreaterThan(0);
        const second = newNamed(SECOND, 'direct-second');
        const failed = await second.dm.setup().then(
          () => 'started',
          (e: unknown) => (e instanceof FailedPreconditionError ? e.message.split(':')[0] : String(e)),
        );
        // It starts when a region is left free, else it refuses to (every region is the first's).
        expect(failed).toBe(
          free.length > 0 ? 'started' : `no PMEM on this node is left for driver ${SECOND} (owner mark a99c7e08e1)`,
        );
        expect(second.lines.filter((l) => l['msg'] === REFUSED).map((l) => l['region'])).toEqual(
          claimed.map((r) => r.dev),
        );
        expect(await second.dm.listDevices()).toEqual([]);
        expect((await second.dm.getCapacity()).managed).toBe(sizeOf(free));
        for (const v of volumes) await second.dm.deleteDevice(v.volumeId, true);
        expect(asJson(liveNamespaces(await ndctl.listNamespaces()))).toEqual(asJson(before));
      },
    },
    cleanup: {
      name: 'DeleteVolume removes them; the regions are free again',
      check: async (g) => {
        expect(await g.driver.deviceManager.listDevices()).toEqual([]);
        for (const r of await pmemRegions()) expect(r.availableSize).toBe(r.size);
      },
    },
  });
}

export const directSuite: GuestModeSuite = {
  mode: 'direct',
  log,
  newManager: () => newDirect(),
  deviceCases,
  ownerCases,
  contract,
  reboot,
  csi: {
    daxName: (fs) => `${fs}: stage formats and mounts with dax, files are DAX (statx 0x200000), unstage, delete`,
    exactCapacity: false,
    fileIoName: 'usage=FileIO: ext4 on a sector-mode namespace, mounted without dax, files not DAX',
    fileIoVolume: 'fileio',
    fileIoStaged,
    eraseName: (eraseafter) =>
      `eraseafter=${eraseafter}: after DeleteVolume the namespace's space holds ${eraseafter ? 'only zeros' : 'the old data'}`,
    erasedSpace,
    cases: csiCases,
  },
};
