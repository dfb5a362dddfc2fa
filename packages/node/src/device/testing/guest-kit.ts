// What the real-PMEM guest suites (lvm.guest.test.ts, direct.guest.test.ts) share: the guest's
// environment, a host runner that remembers every call (stdout for the recorded fixtures, time for
// the report), recording of tool outputs, DAX and raw-device probes, and small CSI call helpers.
// Only for code that runs inside the QEMU guest of e2e/qemu; importing it elsewhere throws.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { appendFile, mkdir, mkdtemp, open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  HostRunner,
  createLogger,
  renderCommand,
  type CommandRunner,
  type csi,
  type Logger,
  type RunOptions,
  type RunResult,
} from '@pmem-csi/runtime';
import {
  call,
  mountCapability,
  startTestNode,
  testClients,
  type TestClients,
  type TestNode,
} from '../../csi/testing/test-node.js';
import { startNodeDriver, type NodeDriver } from '../../node-driver.js';
import { MiB } from '@pmem-csi/csi';
import type { DeviceManager, DeviceMode } from '../device-manager.js';
import { Ndctl, type NdNamespace, type NdRegion } from '../ndctl.js';

if (process.env['PMEM_CSI_GUEST'] !== '1') {
  throw new Error(
    'the *.guest.test.ts suites need the QEMU guest of the real-PMEM tier (run: bash e2e/qemu/run.sh); ' +
      'the host unit run must exclude *.guest.test.ts (jest.preset.js testPathIgnorePatterns)',
  );
}

/** Which boot of the guest this is: 1 = blank NVDIMMs, 2 = the same NVDIMMs after a power-off. */
export const BOOT = process.env['PMEM_CSI_GUEST_BOOT'] ?? '1';
/** Shared with the host: Jest results, logs, recorded outputs, data handed from boot 1 to boot 2. */
export const RESULTS = process.env['PMEM_CSI_GUEST_RESULTS'] ?? '/results';
/** The node driver's state directory, on the guest's persistent state disk. */
export const STATE_DIR = process.env['PMEM_CSI_GUEST_STATE_DIR'] ?? '/var/lib/pmem-csi.intel.com';
/** Per-case timeout: tool calls under TCG are slow. */
export const SLOW = 300_000;
/** STATX_ATTR_DAX. */
export const DAX_ATTR = 0x200000n;

// ---- the runner ----------------------------------------------------------------------------------

interface ToolCall {
  readonly command: string;
  readonly ms: number;
}

/** A short name of a tool call for the timing report: "ndctl create-namespace", "dd (read)", "lvcreate". */
function toolLabel(command: string, args: readonly string[]): string {
  if (command === 'ndctl') return `ndctl ${args[0] ?? ''}`;
  if (command === 'xfs_io') return `xfs_io ${(args[1] ?? '').split(' ')[0] ?? ''}`;
  if (command === 'dd') return args[0] === 'if=/dev/zero' ? 'dd (zero)' : 'dd (read)';
  return command;
}

/** The host runner, remembering every call. */
export class RecordingRunner implements CommandRunner {
  readonly inner = new HostRunner({ defaultTimeoutMs: 180_000 });
  readonly results: RunResult[] = [];
  readonly calls: ToolCall[] = [];
  which(tool: string): string | undefined {
    return this.inner.which(tool);
  }
  async run(command: string, args: readonly string[], options?: RunOptions): Promise<RunResult> {
    const t0 = Date.now();
    try {
      const res = await this.inner.run(command, args, options);
      this.results.push(res);
      return res;
    } finally {
      this.calls.push({ command: toolLabel(command, args), ms: Date.now() - t0 });
    }
  }
}

/** One runner per suite file (Jest loads this module once per test file). */
export const runner = new RecordingRunner();
export const ndctl = new Ndctl(runner);

/** The driver's JSON log of a mode and boot, written next to the results. */
export function guestLogger(mode: string): Logger {
  return createLogger({
    format: 'json',
    level: 'debug',
    sink: (line) =>
      void appendFile(join(RESULTS, `driver-${mode}-boot${BOOT}.log`), `${line}\n`).catch(() => undefined),
  });
}

/** Save the tool timings of this boot for the harness's report. */
export async function saveToolTimings(mode: string): Promise<void> {
  await writeFile(join(RESULTS, `tool-timings-${mode}-boot${BOOT}.json`), JSON.stringify(runner.calls));
}

// ---- recorded outputs ----------------------------------------------------------------------------

async function saveStdout(name: string, res: RunResult): Promise<void> {
  const dir = join(RESULTS, 'recorded');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, name), res.stdout);
  await appendFile(join(dir, 'commands.tsv'), `${name}\t${renderCommand(res.command, res.args)}\n`);
}

/** Run `fn` and save the stdout of the last command it ran as recorded/<name> (with the command line). */
export async function record<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const before = runner.results.length;
  const value = await fn();
  const res = runner.results.at(-1);
  if (res === undefined || runner.results.length === before) throw new Error(`record ${name}: no command ran`);
  await saveStdout(name, res);
  return value;
}

/** Like record(), for the first command of `fn` whose arguments start with `first`. */
export async function recordCall<T>(name: string, first: string, fn: () => Promise<T>): Promise<T> {
  const before = runner.results.length;
  const value = await fn();
  const res = runner.results.slice(before).find((r) => r.args[0] === first);
  if (res === undefined) throw new Error(`record ${name}: no "${first}" command ran`);
  await saveStdout(name, res);
  return value;
}

// ---- files, DAX, raw devices ---------------------------------------------------------------------

/** The statx attributes of a file, from `xfs_io -c 'statx -r'` (works on ext4 and xfs). */
async function statxAttributes(file: string): Promise<bigint> {
  const res = await runner.run('xfs_io', ['-c', 'statx -r', file]);
  const m = /stat\.attributes = (0x[0-9a-f]+)/.exec(res.stdout);
  if (m?.[1] === undefined) throw new Error(`xfs_io statx -r ${file} printed no attributes:\n${res.stdout}`);
  return BigInt(m[1]);
}

export async function isDaxFile(file: string): Promise<boolean> {
  return ((await statxAttributes(file)) & DAX_ATTR) !== 0n;
}

/** Mount options of the filesystem at `target` (from findmnt). */
export async function mountOptions(target: string): Promise<string[]> {
  const res = await runner.run('findmnt', ['-J', '-o', 'TARGET,SOURCE,FSTYPE,OPTIONS', '--mountpoint', target]);
  const fs = (JSON.parse(res.stdout) as { filesystems: Array<{ options: string }> }).filesystems[0];
  if (fs === undefined) throw new Error(`nothing mounted at ${target}`);
  return fs.options.split(',');
}

/** Write `data` at `offset` of an existing file or device and fsync it. */
export async function writeRaw(path: string, offset: number, data: Buffer): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.write(data, 0, data.length, offset);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Write `data` to a new file and fsync it. */
export async function writeSynced(file: string, data: Buffer): Promise<void> {
  await writeFile(file, '');
  await writeRaw(file, 0, data);
}

/** Read `length` bytes of a block device at `offset` with O_DIRECT (no stale page cache) via dd. */
export async function readRaw(device: string, offset: number, length: number): Promise<Buffer> {
  const tmp = join(await mkdtemp('/tmp/raw-'), 'data');
  await runner.run('dd', [
    `if=${device}`,
    `of=${tmp}`,
    'bs=1M',
    `skip=${offset}`,
    `count=${length}`,
    'iflag=direct,skip_bytes,count_bytes',
    'status=none',
  ]);
  return readFile(tmp);
}

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** A value as it reads back from a JSON file (undefined fields dropped). */
export const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

/** A 4 KiB block that identifies test data on the raw device. */
export const MARK = Buffer.alloc(4096, 'pmem-csi-qemu-tier-erase-marker/');

const ZEROS = Buffer.alloc(MiB);

/** Whether every byte is zero (chunked Buffer.equals: a per-byte JS callback is far too slow under TCG). */
export function isZero(buf: Buffer): boolean {
  for (let off = 0; off < buf.length; off += ZEROS.length) {
    const chunk = buf.subarray(off, off + ZEROS.length);
    if (!chunk.equals(ZEROS.subarray(0, chunk.length))) return false;
  }
  return true;
}

/** How many 4 KiB blocks of `buf` are MARK. */
export function countMarks(buf: Buffer): number {
  let n = 0;
  for (let off = 0; off + 4096 <= buf.length; off += 4096) if (buf.subarray(off, off + 4096).equals(MARK)) n++;
  return n;
}

/** One exclusive open holds a block device (the same check the managers make before erasing). */
export async function holdDevice(path: string): Promise<() => Promise<void>> {
  const fh = await open(path, constants.O_RDONLY | constants.O_EXCL);
  return () => fh.close();
}

// ---- ndctl ---------------------------------------------------------------------------------------

export async function pmemRegions(): Promise<NdRegion[]> {
  return (await ndctl.listRegions()).filter((r) => r.type === 'pmem');
}

/**
 * Namespaces that hold something, sorted: idle seeds (size 0) are the kernel's bookkeeping and
 * differ after a reboot (seen: destroyed namespaces keep their name as idle seeds until then).
 */
export function liveNamespaces(list: readonly NdNamespace[]): NdNamespace[] {
  return list.filter((ns) => ns.size > 0).sort((a, b) => a.dev.localeCompare(b.dev));
}

// ---- Jest ----------------------------------------------------------------------------------------

/** Cases of one boot only (the other boot's cases are not registered at all, not skipped). */
function onBoot(boot: '1' | '2'): (name: string, fn: () => void) => void {
  return (name, fn) => {
    if (BOOT === boot) describe(name, fn);
  };
}
export const boot1 = onBoot('1');
export const boot2 = onBoot('2');

/** The error a promise rejects with; throws when it resolves. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

// ---- CSI -----------------------------------------------------------------------------------------

export type Fs = 'ext4' | 'xfs';

/** A node driver's CSI clients and the directory its staging/target paths live in. */
export interface Csi {
  c: Pick<TestClients, 'node' | 'controller'>;
  dir: string;
}

/** CreateVolume of `name` with `size` bytes and a mount capability of `fs` (parameters: StorageClass ones). */
export async function createVolume(
  t: Csi,
  v: { name: string; size: number; fs: Fs; parameters?: Record<string, string> },
): Promise<csi.Volume__Output> {
  const { name, size, fs, parameters = {} } = v;
  const res = await call(t.c.controller, t.c.controller.CreateVolume, {
    name,
    capacity_range: { required_bytes: String(size) },
    volume_capabilities: [mountCapability(fs)],
    parameters,
  });
  return res.volume!;
}

export async function stage(
  t: Csi,
  v: { volume_id: string; volume_context: Record<string, string> },
  fs: Fs,
  path: string,
): Promise<void> {
  await call(t.c.node, t.c.node.NodeStageVolume, {
    volume_id: v.volume_id,
    staging_target_path: path,
    volume_capability: mountCapability(fs),
    volume_context: v.volume_context,
  });
}

export async function publish(
  t: Csi,
  v: { volume_id: string; volume_context: Record<string, string> },
  fs: Fs,
  paths: { staging: string; target: string },
): Promise<void> {
  await call(t.c.node, t.c.node.NodePublishVolume, {
    volume_id: v.volume_id,
    staging_target_path: paths.staging,
    target_path: paths.target,
    volume_capability: mountCapability(fs),
    volume_context: v.volume_context,
  });
}

export async function unstage(t: Csi, volumeId: string, path: string): Promise<void> {
  await call(t.c.node, t.c.node.NodeUnstageVolume, { volume_id: volumeId, staging_target_path: path });
}

export async function deleteVolume(t: Csi, volumeId: string): Promise<void> {
  await call(t.c.controller, t.c.controller.DeleteVolume, { volume_id: volumeId });
}

/** Unmount whatever a CSI describe left mounted under `dir` and delete every volume it left (after failed cases). */
export async function cleanupCsi(t: Csi | undefined): Promise<void> {
  if (t === undefined) return;
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  const targets = mountinfo
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith(`${t.dir}/`))
    .reverse();
  for (const m of targets) await runner.run('umount', [m]).catch(() => undefined);
  const listed = await call(t.c.controller, t.c.controller.ListVolumes, {}).catch(() => ({ entries: [] }));
  for (const e of listed.entries) if (e.volume) await deleteVolume(t, e.volume.volume_id).catch(() => undefined);
}

// ---- reboot: boot 1 leaves volumes with data, boot 2 finds them ----------------------------------

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
  o: { deviceMode: DeviceMode; pmemPercentage?: number; log: Logger },
): Promise<GuestDriver> {
  const csiSock = join(dir, 'csi.sock');
  const ncSock = join(dir, 'nc.sock');
  const driver = await startNodeDriver({
    driverName: 'pmem-csi.intel.com',
    nodeId: 'qemu-guest',
    deviceMode: o.deviceMode,
    deviceOptions: { pmemPercentage: o.pmemPercentage ?? 0 },
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

/**
 * Inside a describe: a CSI test node on a fresh device manager from `makeDm` for the cases, with
 * whatever they leave behind cleaned up after them. Returns the cases' view of it.
 */
export function useCsiNode(makeDm: () => DeviceManager, o: { name: string; log: Logger }): () => Csi {
  let t: Csi | undefined;
  let node: TestNode | undefined;
  let clients: TestClients | undefined;
  beforeAll(async () => {
    const dm = makeDm();
    await dm.setup();
    const dir = await mkdtemp(`/tmp/csi-${o.name}-`);
    node = await startTestNode({ dm, dir, runner, log: o.log });
    clients = testClients(node.address);
    t = { c: clients, dir };
  }, SLOW);
  afterAll(async () => {
    await cleanupCsi(t);
    clients?.close();
    await node?.stop();
  }, SLOW);
  return () => {
    if (t === undefined) throw new Error('the CSI test node did not start (see the beforeAll error)');
    return t;
  };
}
