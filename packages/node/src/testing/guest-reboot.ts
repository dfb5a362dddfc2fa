// The reboot cases shared by the device modes: boot 1 leaves volumes with data (one unstaged, two
// still mounted at power-off), boot 2 checks that the device-level state, the node driver's start-up
// reconcile and the data (with DAX) are as boot 1 left them, then deletes everything. A node driver
// runs as the DaemonSet runs it, with its state on the guest's persistent state disk.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MiB } from '@pmem-csi/csi';
import type { Logger } from '@pmem-csi/runtime';
import { call, testClients, type TestClients } from './test-node.js';
import { startNodeDriver, type NodeDriver } from '../node-driver.js';
import type { VolumeDeviceMode } from '@pmem-csi/api';
import { PMEM_KIND, STATE_DIR, SLOW, boot1, boot2, runner } from '../device/testing/guest-env.js';
import { createVolume, deleteVolume, stage, unstage, type Csi, type Fs } from './guest-csi.js';
import { isDaxFile, sha256, writeSynced } from '../device/testing/guest-devices.js';

/** A volume boot 1 leaves for boot 2, with the checksum of its data. */
export interface PersistedVolume {
  readonly name: string;
  readonly volumeId: string;
  readonly fs: Fs;
  readonly usage: 'AppDirect' | 'FileIO';
  readonly size: number;
  readonly sha256: string;
  /** Unstaged before the power-off (the others stay mounted, so boot 2 sees a journal replay). */
  readonly cleanUnstage: boolean;
}

/** The volumes boot 1 leaves: ext4 unstaged cleanly, xfs and a FileIO volume still mounted. */
const PERSIST: ReadonlyArray<Omit<PersistedVolume, 'volumeId' | 'sha256'>> = [
  { name: 'persist-ext4', fs: 'ext4', usage: 'AppDirect', size: 64 * MiB, cleanUnstage: true },
  { name: 'persist-xfs', fs: 'xfs', usage: 'AppDirect', size: 320 * MiB, cleanUnstage: false },
  { name: 'persist-fileio', fs: 'ext4', usage: 'FileIO', size: 64 * MiB, cleanUnstage: false },
];

/** A node driver as the DaemonSet runs it (state on the guest's state disk), on unix sockets in `dir`. */
export interface GuestDriver {
  readonly driver: NodeDriver;
  readonly node: TestClients;
  readonly ctrl: TestClients;
  /** Its CSI calls, with staging/target paths under `dir`. */
  readonly csi: Csi;
  stop(): Promise<void>;
}

export async function startGuestDriver(
  dir: string,
  o: { deviceMode: VolumeDeviceMode; pmemPercentage?: number; log: Logger },
): Promise<GuestDriver> {
  const csiSock = join(dir, 'csi.sock');
  const ncSock = join(dir, 'nc.sock');
  const driver = await startNodeDriver({
    driverName: 'pmem-csi.intel.com',
    nodeId: 'qemu-guest',
    deviceMode: o.deviceMode,
    deviceOptions: { pmemPercentage: o.pmemPercentage ?? 0 },
    // On CXL the node assembles the regions itself at start (after a power-off they are gone).
    cxlRegions: PMEM_KIND === 'cxl' ? 'assemble' : 'manual',
    runner,
    stateDir: STATE_DIR,
    csiEndpoint: `unix://${csiSock}`,
    nodeControllerAddress: `unix://${ncSock}`,
    serverCredentials: grpc.ServerCredentials.createInsecure(),
    channelCredentials: grpc.credentials.createInsecure(),
    log: o.log,
  });
  const node = testClients(`unix://${csiSock}`);
  const ctrl = testClients(`unix://${ncSock}`);
  return {
    driver,
    node,
    ctrl,
    csi: { c: { node: node.node, controller: ctrl.controller }, dir },
    stop: async () => {
      node.close();
      ctrl.close();
      await driver.stop();
    },
  };
}

/** Boot 1: create, stage and fill the PERSIST volumes; unstage those meant to be clean; sync. */
async function leaveVolumes(t: Csi): Promise<PersistedVolume[]> {
  const volumes: PersistedVolume[] = [];
  for (const p of PERSIST) {
    const v = await createVolume(t, {
      name: p.name,
      size: p.size,
      fs: p.fs,
      parameters: p.usage === 'FileIO' ? { usage: 'FileIO' } : {},
    });
    const staging = join(t.dir, `stage-${p.name}`);
    await stage(t, v, p.fs, staging);
    const data = randomBytes(2 * MiB);
    await writeSynced(join(staging, 'data'), data);
    if (p.cleanUnstage) await unstage(t, v.volume_id, staging);
    volumes.push({ ...p, volumeId: v.volume_id, sha256: sha256(data) });
  }
  await runner.run('sync', []);
  return volumes;
}

/** Boot 2: the driver's start-up reconcile kept every record with its device, and lists exactly them. */
async function expectReconciled(g: GuestDriver, volumes: readonly PersistedVolume[]): Promise<void> {
  const ids = volumes.map((v) => v.volumeId).sort();
  expect(g.driver.reconciled.volumes.map((v) => v.record.volumeId).sort()).toEqual(ids);
  expect(g.driver.reconciled.droppedRecords).toEqual([]);
  expect(g.driver.reconciled.orphans).toEqual([]);
  const listed = await call(g.ctrl.controller, g.ctrl.controller.ListVolumes, {});
  expect(listed.entries.map((e) => e.volume?.volume_id).sort()).toEqual(ids);
}

/** Boot 2: every volume stages again (journal replay where it was left mounted), data and dax as before. */
async function expectDataIntact(t: Csi, volumes: readonly PersistedVolume[]): Promise<void> {
  for (const p of volumes) {
    const context: Record<string, string> = p.usage === 'FileIO' ? { usage: 'FileIO' } : {};
    const staging = join(t.dir, `stage-${p.name}`);
    await stage(t, { volume_id: p.volumeId, volume_context: context }, p.fs, staging);
    expect(sha256(await readFile(join(staging, 'data')))).toBe(p.sha256);
    expect(await isDaxFile(join(staging, 'data'))).toBe(p.usage === 'AppDirect');
    await unstage(t, p.volumeId, staging);
  }
}

/** Boot 2: what boot 1 wrote to `file` (fails with the reason when boot 1 never got there). */
async function readPersisted<T>(file: string): Promise<T> {
  const text = await readFile(file, 'utf8').catch((e: unknown) => {
    throw new Error(`boot 1 left no ${file}: it failed before the reboot step (${String(e)})`);
  });
  return JSON.parse(text) as T;
}

/** The reboot cases of one device mode; what differs between modes is passed in. */
export interface RebootScenario<D> {
  /** Where boot 1 leaves its record for boot 2 (under RESULTS). */
  readonly persistFile: string;
  readonly start: (dir: string) => Promise<GuestDriver>;
  /** Boot 1, after the volumes are left: the device-level state to find again (namespaces, VGs). */
  readonly snapshot: () => Promise<D>;
  /** Boot 2, before the driver starts: the device-level state is as boot 1 left it. */
  readonly unchanged: { readonly name: string; readonly check: (before: D) => Promise<void> };
  /** What the start-up reconcile matches each record with ("namespace", "LV"). */
  readonly device: string;
  readonly dataCase: string;
  /** Boot 2, after the data case, while boot 1's volumes still exist (e.g. another driver instance meets them). */
  readonly afterData?: {
    readonly name: string;
    readonly check: (g: GuestDriver, volumes: readonly PersistedVolume[]) => Promise<void>;
  };
  /** Boot 2, last: delete every volume and check the PMEM is free again. */
  readonly cleanup: { readonly name: string; readonly check: (g: GuestDriver) => Promise<void> };
}

/** Register boot 1's "leave volumes" case and boot 2's checks (each only on its boot). */
export function rebootScenario<D>(s: RebootScenario<D>): void {
  interface Persisted {
    readonly volumes: PersistedVolume[];
    readonly devices: D;
  }

  boot1('before the reboot: the node driver (state on the persistent disk) leaves volumes with data', () => {
    it(
      'creates, stages and fills three volumes; one is unstaged, two stay mounted at power-off',
      async () => {
        const g = await s.start(await mkdtemp('/tmp/drv-'));
        try {
          const volumes = await leaveVolumes(g.csi);
          const persisted: Persisted = { volumes, devices: await s.snapshot() };
          await writeFile(s.persistFile, JSON.stringify(persisted, null, 2));
        } finally {
          await g.stop();
        }
      },
      SLOW,
    );
  });

  boot2('after the reboot: devices, node state and data are intact', () => {
    let persisted: Persisted;
    let dir: string;
    let started: GuestDriver | undefined;
    /** The driver of the reconcile case; later cases fail with this reason when it did not start. */
    const driver = (): GuestDriver => {
      if (started === undefined)
        throw new Error('the node driver did not start after the reboot (see the reconcile case)');
      return started;
    };

    beforeAll(async () => {
      persisted = await readPersisted<Persisted>(s.persistFile);
      dir = await mkdtemp('/tmp/drv2-');
    }, SLOW);

    afterAll(async () => {
      await started?.stop();
    }, SLOW);

    it(
      s.unchanged.name,
      async () => {
        await s.unchanged.check(persisted.devices);
      },
      SLOW,
    );

    it(
      `the node driver reconciles every volume record with its ${s.device}: none dropped, no orphans`,
      async () => {
        started = await s.start(dir);
        await expectReconciled(started, persisted.volumes);
      },
      SLOW,
    );

    it(
      s.dataCase,
      async () => {
        await expectDataIntact(driver().csi, persisted.volumes);
      },
      SLOW,
    );

    if (s.afterData !== undefined) {
      const { name, check } = s.afterData;
      it(name, () => check(driver(), persisted.volumes), SLOW);
    }

    it(
      s.cleanup.name,
      async () => {
        for (const p of persisted.volumes) await deleteVolume(driver().csi, p.volumeId);
        await s.cleanup.check(driver());
      },
      SLOW,
    );
  });
}
