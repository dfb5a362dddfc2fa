// The emulated device manager on real loop devices: the shared contract plus what only real
// devices show (data really erased, a mounted device is busy, rediscovery after a "reboot", foreign
// loop devices left alone). Needs root and loop devices; without them every case FAILS with the
// reason. Every loop device and file made here is removed in afterAll, also after failures.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  access,
  constants,
  mkdir,
  mkdtemp,
  open,
  readdir,
  realpath,
  rm,
  stat,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HostRunner, nullLogger, type CommandRunner, type RunOptions, type RunResult } from '@pmem-csi/runtime';
import { blockDeviceIo, deviceManagerContract, type ObservedErasure } from './testing/contract.js';
import { DeviceInUseError } from './device-manager.js';
import { EMULATED_GRANULARITY, EmulatedDeviceManager } from './emulated.js';
import { attachLoopDevice, detachLoopDevice, fileIdentity, listLoopDevices } from './emulated-losetup.js';
import { MiB } from '@pmem-csi/csi';

const TOTAL = 256 * MiB;
const host = new HostRunner();
// Loop devices, dd and mount are slow when the machine is busy; the default 5 s is too tight.
jest.setTimeout(30_000);

/** Passes every call on and remembers what `dd` zeroed (device and bytes). */
class ErasureRecordingRunner implements CommandRunner {
  readonly erasures: ObservedErasure[] = [];
  constructor(readonly inner: CommandRunner) {}

  which(tool: string): string | undefined {
    return this.inner.which(tool);
  }

  async run(command: string, args: readonly string[], options?: RunOptions): Promise<RunResult> {
    const res = await this.inner.run(command, args, options);
    const arg = (k: string): string => args.find((a) => a.startsWith(`${k}=`))?.slice(k.length + 1) ?? '';
    if (command === 'dd' && arg('if') === '/dev/zero') {
      // count is in bytes with iflag=count_bytes, in blocks of bs otherwise.
      const bytes = arg('iflag').split(',').includes('count_bytes')
        ? Number(arg('count'))
        : Number(arg('bs')) * Number(arg('count'));
      this.erasures.push({ path: arg('of'), bytes });
    }
    return res;
  }
}

/** Why the emulated device tests cannot run here (empty when they can). */
async function prerequisites(): Promise<string[]> {
  const problems: string[] = [];
  if (process.getuid?.() !== 0) problems.push(`they need root, running as uid ${String(process.getuid?.())}`);
  for (const tool of ['losetup', 'dd', 'mkfs.ext4', 'mount', 'umount'])
    if (host.which(tool) === undefined) problems.push(`${tool} is not installed`);
  try {
    await access('/dev/loop-control', constants.R_OK | constants.W_OK);
  } catch (e) {
    problems.push(`no loop device support (/dev/loop-control: ${(e as Error).message})`);
  }
  return problems;
}

async function requirePrerequisites(): Promise<void> {
  const problems = await prerequisites();
  if (problems.length > 0) throw new Error(`emulated device tests cannot run on this machine: ${problems.join('; ')}`);
}

/** A fresh test directory (canonical path, as the kernel reports backing files). */
async function testDir(): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), 'pmem-csi-emulated-')));
}

/** Detach every loop device whose backing file is under `dir` (deleted ones too, waiting for lazy detaches), then remove `dir`. */
async function removeTestDir(dir: string): Promise<void> {
  let left: string[] = [];
  for (let attempt = 0; attempt < 50; attempt++) {
    left = (await listLoopDevices(host)).filter((l) => l.backFile.startsWith(`${dir}/`)).map((l) => l.name);
    if (left.length === 0) break;
    for (const dev of left) await detachLoopDevice(host, dev).catch(() => undefined);
    await sleep(100);
  }
  await rm(dir, { recursive: true, force: true });
  if (left.length > 0) throw new Error(`loop devices still attached to files under ${dir}: ${left.join(', ')}`);
}

describe('emulated device tests: prerequisites', () => {
  it('run as root with losetup, dd, mkfs.ext4, mount and /dev/loop-control', async () => {
    expect(await prerequisites()).toEqual([]);
  });
});

deviceManagerContract(
  'emulated',
  async () => {
    await requirePrerequisites();
    const dir = await testDir();
    try {
      const runner = new ErasureRecordingRunner(host);
      const make = (): EmulatedDeviceManager =>
        new EmulatedDeviceManager({ runner, log: nullLogger, dir: join(dir, 'emulated'), totalSize: TOTAL });
      return {
        dm: make(),
        reopen: async () => make(),
        hold: async (dev) => {
          const fh = await open(dev.path, constants.O_RDONLY | constants.O_EXCL);
          return () => fh.close();
        },
        erasures: () => runner.erasures,
        cleanup: () => removeTestDir(dir),
      };
    } catch (e) {
      await removeTestDir(dir);
      throw e;
    }
  },
  { volumeSize: 8 * MiB, granularity: EMULATED_GRANULARITY, totalSize: TOTAL, readable: true, resize: true },
);

describe('EmulatedDeviceManager on real loop devices', () => {
  let dir = '';
  let backing = '';
  let dm: EmulatedDeviceManager;
  const make = (): EmulatedDeviceManager =>
    new EmulatedDeviceManager({ runner: host, log: nullLogger, dir: backing, totalSize: TOTAL });

  beforeAll(async () => {
    await requirePrerequisites();
    dir = await testDir();
    backing = join(dir, 'emulated');
    dm = make();
    await dm.setup();
  });
  afterAll(async () => {
    if (dir !== '') await removeTestDir(dir);
  });

  it('keeps one sparse <volumeId>.img per volume, attached to a loop device, and removes both on delete', async () => {
    const dev = await dm.createDevice({ volumeId: 'files', size: 64 * MiB });
    const file = join(backing, 'files.img');
    const st = await stat(file);
    expect(st.size).toBe(64 * MiB);
    expect(st.blocks * 512).toBeLessThan(MiB); // sparse
    expect(await listLoopDevices(host, undefined, dev.path)).toEqual([
      { name: dev.path, backFile: file, deleted: false, backId: await fileIdentity(file) },
    ]);
    await dm.deleteDevice('files', false);
    expect(await readdir(backing)).toEqual([]);
    expect((await listLoopDevices(host)).filter((l) => l.backFile === file)).toEqual([]);
  });

  it('erase=true overwrites every byte; erase=false only the first 4 KiB (read through a handle kept open)', async () => {
    for (const erase of [true, false]) {
      const dev = await dm.createDevice({ volumeId: `erase-${erase}`, size: 8 * MiB });
      // A plain (non-exclusive) open does not make the device busy, and the kernel keeps the loop
      // device bound to the unlinked file until the last handle closes: we can look at what was left.
      const fh = await open(dev.path, 'r+');
      try {
        for (const off of [0, 4 * MiB, 8 * MiB - 4096]) await fh.write(Buffer.alloc(4096, 0x5a), 0, 4096, off);
        await fh.sync();
        await dm.deleteDevice(dev.volumeId, erase);
        const read = async (off: number): Promise<number[]> => {
          const buf = Buffer.alloc(4096);
          await fh.read(buf, 0, 4096, off);
          return [...new Set(buf)];
        };
        expect(await read(0)).toEqual([0]);
        expect(await read(4 * MiB)).toEqual([erase ? 0 : 0x5a]);
        expect(await read(8 * MiB - 4096)).toEqual([erase ? 0 : 0x5a]);
      } finally {
        await fh.close();
      }
    }
    expect(await dm.listDevices()).toEqual([]);
  });

  it('a mounted device is in use: delete fails with DeviceInUseError, succeeds after unmount', async () => {
    const dev = await dm.createDevice({ volumeId: 'mounted', size: 16 * MiB });
    const mnt = join(dir, 'mnt');
    await mkdir(mnt, { recursive: true });
    await host.run('mkfs.ext4', ['-q', '-F', dev.path]);
    await host.run('mount', [dev.path, mnt]);
    try {
      const err = await dm.deleteDevice('mounted', true).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DeviceInUseError);
      expect(err).toMatchObject({
        kind: 'FailedPrecondition',
        message: `device ${dev.path} of volume "mounted" is in use (mounted or open)`,
      });
      expect(await dm.getDevice('mounted')).toEqual(dev);
    } finally {
      await host.run('umount', [mnt]);
    }
    await dm.deleteDevice('mounted', false);
    expect(await dm.listDevices()).toEqual([]);
  });

  it('after a reboot (loop devices gone) setup() re-attaches the files; data survives', async () => {
    const dev = await dm.createDevice({ volumeId: 'reboot', size: 8 * MiB });
    await blockDeviceIo.write(dev, 4096, Buffer.from('survives'));
    await detachLoopDevice(host, dev.path);
    const dm2 = make();
    await dm2.setup();
    const again = await dm2.getDevice('reboot');
    expect(again).toMatchObject({ volumeId: 'reboot', size: 8 * MiB, dax: false });
    expect((await blockDeviceIo.read(again, 4096, 8)).toString()).toBe('survives');
    expect(await dm2.getCapacity()).toEqual(await dm.getCapacity());
    await dm2.deleteDevice('reboot', false);
    await dm.setup(); // resync the first manager with the backing store
    expect(await dm.listDevices()).toEqual([]);
  });

  it('a driver restarted in a new mount namespace adopts the loop device its predecessor attached (one device per file)', async () => {
    // The node driver runs in a container: it attaches through its bind mount of the state
    // directory. Once that container is gone, the kernel reports the backing file relative to the
    // vanished mount ("/<id>.img" here), so a restarted driver that matched by path attached a
    // second loop device to a file that was still mounted through the first.
    await writeFile(join(backing, 'restarted.img'), '');
    await host.run('truncate', ['-s', String(8 * MiB), join(backing, 'restarted.img')]);
    const view = join(dir, 'container-view');
    await mkdir(view, { recursive: true });
    const attached = await host.run('unshare', [
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      `mount --bind "$0" "$1" && losetup --find --show "$1/restarted.img"`,
      backing,
      view,
    ]);
    const device = attached.stdout.trim();
    expect((await listLoopDevices(host, undefined, device))[0]?.backFile).toBe('/restarted.img');
    const restarted = make();
    await restarted.setup();
    expect(await restarted.getDevice('restarted')).toMatchObject({ path: device });
    const id = await fileIdentity(join(backing, 'restarted.img'));
    expect((await listLoopDevices(host)).filter((l) => l.backId === id).map((l) => l.name)).toEqual([device]);
    await restarted.deleteDevice('restarted', false);
    expect((await listLoopDevices(host)).map((l) => l.name)).not.toContain(device);
    await dm.setup();
    expect(await dm.listDevices()).toEqual([]);
  });

  it('never touches loop devices of files outside the backing directory, even of a look-alike sibling', async () => {
    const sibling = `${backing}-other`;
    await mkdir(sibling, { recursive: true });
    const foreignFile = join(sibling, 'foreign.img');
    await writeFile(foreignFile, Buffer.alloc(MiB, 0x11));
    const foreign = await attachLoopDevice(host, foreignFile);
    try {
      await dm.setup();
      await dm.createDevice({ volumeId: 'foreign', size: 8 * MiB });
      await dm.deleteDevice('foreign', true);
      expect(await dm.listDevices()).toEqual([]);
      expect(await listLoopDevices(host, undefined, foreign)).toEqual([
        { name: foreign, backFile: foreignFile, deleted: false, backId: await fileIdentity(foreignFile) },
      ]);
      const fh = await open(foreign, 'r');
      const buf = Buffer.alloc(16);
      await fh.read(buf, 0, 16, 0);
      await fh.close();
      expect([...new Set(buf)]).toEqual([0x11]);
    } finally {
      await detachLoopDevice(host, foreign);
    }
  });

  it('a create killed before the file was complete leaves nothing that setup() lists: scratch and empty files are removed', async () => {
    // What a SIGKILL leaves: this driver's scratch file (size not yet set), or the empty
    // <id>.img of a driver from before files were created under a scratch name.
    await writeFile(join(backing, '.killed.img.creating'), '');
    await writeFile(join(backing, 'empty.img'), '');
    await writeFile(join(backing, '.other-tool.tmp'), 'not ours'); // foreign by name: left alone
    const dm2 = make();
    await dm2.setup();
    expect(await dm2.listDevices()).toEqual([]);
    expect((await readdir(backing)).sort()).toEqual(['.other-tool.tmp']);
    expect((await dm2.getCapacity()).available).toBe(TOTAL);
    // The retried create finds nothing in its way and makes the full-size volume.
    const dev = await dm2.createDevice({ volumeId: 'killed', size: 8 * MiB });
    expect(dev.size).toBe(8 * MiB);
    expect((await stat(join(backing, 'killed.img'))).size).toBe(8 * MiB);
    expect((await readdir(backing)).sort()).toEqual(['.other-tool.tmp', 'killed.img']);
    await dm2.deleteDevice('killed', false);
    await rm(join(backing, '.other-tool.tmp'));
    await dm.setup();
    expect(await dm.listDevices()).toEqual([]);
  });

  it('a retried resize refreshes the loop device even when the file already has the new size', async () => {
    const dev = await dm.createDevice({ volumeId: 'regrow', size: 8 * MiB });
    const sizeOf = async (): Promise<number> =>
      Number((await host.run('blockdev', ['--getsize64', dev.path])).stdout.trim());
    // A driver killed after growing the file and before refreshing the device: file 16 MiB, device 8 MiB.
    await truncate(join(backing, 'regrow.img'), 16 * MiB);
    const dm2 = make();
    await dm2.setup();
    expect(await sizeOf()).toBe(8 * MiB);
    expect(await dm2.resizeDevice('regrow', 16 * MiB)).toMatchObject({ size: 16 * MiB });
    expect(await sizeOf()).toBe(16 * MiB);
    await dm2.deleteDevice('regrow', false);
    await dm.setup();
    expect(await dm.listDevices()).toEqual([]);
  });

  it('rejects volume ids that are not safe file names, creating nothing', async () => {
    for (const volumeId of ['../escape', 'a/b', '.hidden', '-dash', '', 'x'.repeat(129)]) {
      await expect(dm.createDevice({ volumeId, size: MiB })).rejects.toMatchObject({ kind: 'InvalidArgument' });
    }
    expect(await readdir(backing)).toEqual([]);
    expect((await dm.getCapacity()).available).toBe(TOTAL);
  });
});
