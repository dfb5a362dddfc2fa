// CXL persistent memory in the QEMU guest (issue 27): runs ONLY in the CXL guests that the QEMU
// tier boots (e2e/qemu/harness.mjs modes cxl-lvm and cxl-direct: trixie's QEMU, two emulated CXL
// type-3 persistent devices of 4 GiB, each behind its own host bridge and fixed memory window, the
// tier's bookworm image, PMEM_CSI_GUEST_PMEM=cxl), twice per device mode (PMEM_CSI_GUEST_MODE).
// Boot 1, in this order: `cxl list` enumerates the devices; the node's start-up step
// (--cxl-regions, device/cxl-startup.ts) reports and then assembles one pmem region per device; the
// regions are nd regions; then the mode's own device cases, GetCapacity, the CSI node service cases
// every NVDIMM guest runs (src/testing/guest-csi-cases.ts), the second-driver (owner) cases, the DeviceManager contract, and the reboot scenario's
// volumes with data — all taken from the NVDIMM guest suite (src/testing/guest-lvm.ts,
// guest-direct.ts). Boot 2, after the power-off: the devices have no region; the node driver's start
// (startGuestDriver: --cxl-regions=assemble) assembles them again, and the reboot cases find the
// namespaces, volumes, state and data as they were.
// `cxl list` / `ndctl list` outputs are saved under <results>/recorded (cxl-*.json, ndctl-*.json).
import { afterAll, expect, it } from '@jest/globals';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GiB, MiB } from '@pmem-csi/csi';
import { csiLifecycleCases } from '../testing/guest-csi-cases.js';
import { directSuite } from '../testing/guest-direct.js';
import { lvmSuite } from '../testing/guest-lvm.js';
import { guestMode, type GuestMode, type GuestModeSuite } from '../testing/guest-mode.js';
import {
  RESULTS,
  SLOW,
  boot1,
  boot2,
  createVolume,
  deleteVolume,
  ndctl,
  pmemRegions,
  record,
  runner,
  saveToolTimings,
  useCsiNode,
} from '../testing/guest-kit.js';
import { call } from '../testing/test-node.js';
import { Cxl, planCxlRegions } from './cxl.js';
import { prepareCxlRegions } from './cxl-startup.js';
import { labelLessNamespace } from './ndctl.js';

const SUITES: Record<GuestMode, GuestModeSuite> = { lvm: lvmSuite, direct: directSuite };
const mode = guestMode();
const suite = SUITES[mode];
const DEVICES = 2;
const DEVICE_SIZE = 4 * GiB;

afterAll(async () => {
  await saveToolTimings(`cxl-${mode}`);
});

boot1("CXL type-3 persistent memory (cxl list, region assembly by the node's start-up step)", () => {
  const cxl = new Cxl(runner);

  it(
    `cxl list enumerates ${DEVICES} memdevs with ${DEVICE_SIZE / GiB} GiB persistent capacity each and no region`,
    async () => {
      const topo = await record('cxl-list-vvv-before.json', () => cxl.list());
      expect(topo.memdevs).toHaveLength(DEVICES);
      for (const m of topo.memdevs) {
        expect(m.pmemSize).toBe(DEVICE_SIZE);
        expect(m.hostBridge).toMatch(/^ACPI0016:/);
      }
      expect(topo.regions).toEqual([]);
      expect(topo.rootDecoders.filter((d) => d.pmemCapable)).toHaveLength(DEVICES);
      const plan = planCxlRegions(topo);
      expect(plan.create.map((p) => p.size)).toEqual(Array.from({ length: DEVICES }, () => DEVICE_SIZE));
      expect(plan.skipped).toEqual([]);
    },
    SLOW,
  );

  it(
    '--cxl-regions=manual: the node assembles nothing and says what it would do',
    async () => {
      const r = await prepareCxlRegions({ runner, log: suite.log }, 'manual');
      expect(r?.created).toEqual([]);
      expect(r?.notAllowed).toHaveLength(DEVICES);
      expect(await pmemRegions()).toEqual([]);
    },
    SLOW,
  );

  it(
    `--cxl-regions=assemble: one pmem region per device, ready when the step returns; ndctl sees ${DEVICES} nd regions of ${DEVICE_SIZE / GiB} GiB`,
    async () => {
      const r = await prepareCxlRegions({ runner, log: suite.log }, 'assemble');
      expect(r?.created).toHaveLength(DEVICES);
      if (r === undefined) return;
      const after = await record('cxl-list-vvv-after.json', () => cxl.list());
      expect(after.regions.map((x) => x.size)).toEqual(Array.from({ length: DEVICES }, () => DEVICE_SIZE));
      expect(after.regions.every((x) => x.decodeState === 'commit')).toBe(true);
      // Idempotent: a second pass finds every device mapped and leaves it alone.
      const again = planCxlRegions(after);
      expect(again.create).toEqual([]);
      expect(again.skipped.filter((s) => s.what.startsWith('mem'))).toHaveLength(DEVICES);
      const regions = await record('ndctl-list-BRDi-cxl.json', () => ndctl.listRegions());
      const pmem = regions.filter((x) => x.type === 'pmem');
      expect(pmem.map((x) => x.size)).toEqual(Array.from({ length: DEVICES }, () => DEVICE_SIZE));
      // Unlike the tier's NVDIMMs (label-less until setup() initialises them), a CXL region comes
      // with labels (the device's label storage area): its only namespace is an idle seed.
      for (const x of pmem) {
        const ns = await record(`ndctl-list-Ni-cxl-${x.dev}.json`, () => ndctl.listNamespaces({ region: x.dev }));
        expect(labelLessNamespace(ns)).toBeUndefined();
        expect(ns.map((n) => [n.mode, n.size, n.enabled])).toEqual([['raw', 0, false]]);
      }
      await writeFile(
        join(RESULTS, `cxl-capacity-${mode}.json`),
        JSON.stringify({ created: r.created, ndRegions: pmem }, null, 1),
      );
    },
    SLOW,
  );
});

boot2('CXL after the power-off: the regions are gone until the node assembles them again', () => {
  it(
    `cxl list: ${DEVICES} memdevs, no region; the start-up step assembles ${DEVICES} again; ndctl finds each pmem-csi or volume namespace`,
    async () => {
      const cxl = new Cxl(runner);
      const topo = await record('cxl-list-vvv-after-reboot.json', () => cxl.list());
      expect(topo.memdevs.map((m) => m.pmemSize)).toEqual(Array.from({ length: DEVICES }, () => DEVICE_SIZE));
      expect(topo.regions).toEqual([]);
      const r = await prepareCxlRegions({ runner, log: suite.log }, 'assemble');
      expect(r?.created.map((x) => x.size)).toEqual(Array.from({ length: DEVICES }, () => DEVICE_SIZE));
      // The namespaces live in each device's label storage area: found again once the region is back.
      const namespaces = await record('ndctl-list-Ni-cxl-after-reboot.json', () => ndctl.listNamespaces());
      expect(namespaces.filter((n) => n.enabled && n.size > 0).length).toBeGreaterThan(0);
    },
    SLOW,
  );
});

suite.deviceCases();

boot1(`capacity of ${mode} on CXL pmem, as the controller is told`, () => {
  const t = useCsiNode(() => suite.newManager(), { name: `cxl-${mode}-capacity`, log: suite.log });

  it(
    `GetCapacity reports what the ${DEVICES} assembled regions offer, and a volume of it can be created`,
    async () => {
      const cap = await call(t().c.controller, t().c.controller.GetCapacity, {});
      const available = Number(cap.available_capacity);
      expect(available).toBeGreaterThan(64 * MiB);
      expect(available).toBeLessThanOrEqual(DEVICES * DEVICE_SIZE);
      await writeFile(join(RESULTS, `cxl-getcapacity-${mode}.json`), JSON.stringify(cap));
      const v = await createVolume(t(), { name: 'cxl-capacity', size: 64 * MiB, fs: 'ext4' });
      const after = Number((await call(t().c.controller, t().c.controller.GetCapacity, {})).available_capacity);
      expect(after).toBeLessThanOrEqual(available - 64 * MiB);
      await deleteVolume(t(), v.volume_id);
      const back = Number((await call(t().c.controller, t().c.controller.GetCapacity, {})).available_capacity);
      expect(back).toBe(available);
    },
    SLOW,
  );
});

// The same CSI node service cases as on NVDIMMs: dax with ext4 and xfs, FileIO, re-create, the
// mode's own cases (expansion, Kata volumes, ...) and eraseafter.
csiLifecycleCases(suite, `cxl-${mode}`);

suite.ownerCases();
suite.contract();
suite.reboot();
