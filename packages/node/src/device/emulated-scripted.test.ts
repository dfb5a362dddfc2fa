// The emulated device manager's decisions, checked without root against a scripted losetup:
// start-up checks, which loop devices setup() adopts or attaches (and that it detaches none),
// and roll-back when losetup fails half-way. Real devices are covered by emulated.test.ts.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, realpath, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandFailedError, createLogger, nullLogger } from '@pmem-csi/runtime';
import { ScriptedRunner, type ScriptedReply } from '@pmem-csi/runtime/testing';
import { EmulatedDeviceManager } from './emulated.js';
import { boundTo, decodeLoopDevices, fileIdentity, losetupTable, type LoopDevice } from './emulated-losetup.js';
import { MiB } from '@pmem-csi/csi';

/** A scripted runner whose loop devices are what its scripted losetup lists (not the host's sysfs). */
function scriptedLosetup(replies: ScriptedReply[] = [], installed?: string[]): ScriptedRunner {
  const runner = new ScriptedRunner(replies, installed);
  return Object.assign(runner, { loopTable: losetupTable(runner) });
}

const LIST = ['--json', '--list', '--output', 'NAME,BACK-FILE,BACK-MAJ:MIN,BACK-INO'];

function listReply(devices: Array<[string, string | null]>): ScriptedReply {
  const loopdevices = devices.map(([name, back]) => ({ name, 'back-file': back }));
  return { command: 'losetup', args: LIST, exact: true, stdout: JSON.stringify({ loopdevices }) };
}

describe('loop devices matched by the identity of their backing file', () => {
  it('decodes the padded major:minor and the inode into one identity', () => {
    expect(
      decodeLoopDevices({
        loopdevices: [
          { name: '/dev/loop5', 'back-file': '/tmp/x.img', 'back-maj:min': '     254:0  ', 'back-ino': 9981035 },
        ],
      }),
    ).toEqual([{ name: '/dev/loop5', backFile: '/tmp/x.img', deleted: false, backId: '254:0:9981035' }]);
    expect(
      decodeLoopDevices({
        loopdevices: [{ name: '/dev/loop5', 'back-file': '/tmp/x.img', 'back-maj:min': 'junk', 'back-ino': 1 }],
      })[0]?.backId,
    ).toBeUndefined();
  });

  it('a device whose file path is reported relative to a mount that is gone is still found by identity', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'pmem-csi-identity-')));
    try {
      const file = join(dir, 'v.img');
      await writeFile(file, '');
      const id = await fileIdentity(file);
      expect(id).toMatch(/^\d+:\d+:\d+$/);
      const seenFromAnotherMount: LoopDevice = {
        name: '/dev/loop3',
        backFile: '/emulated/v.img',
        deleted: false,
        ...(id === undefined ? {} : { backId: id }),
      };
      const otherFile: LoopDevice = { name: '/dev/loop4', backFile: file, deleted: false, backId: '1:2:3' };
      const deleted: LoopDevice = {
        name: '/dev/loop6',
        backFile: file,
        deleted: true,
        ...(id === undefined ? {} : { backId: id }),
      };
      expect(boundTo([seenFromAnotherMount, otherFile, deleted], file, id).map((l) => l.name)).toEqual(['/dev/loop3']);
      // Without an identity (older losetup, or the file is gone): by path, never a deleted one.
      expect(
        boundTo([{ name: '/dev/loop7', backFile: file, deleted: false }, deleted], file, undefined).map((l) => l.name),
      ).toEqual(['/dev/loop7']);
      expect(await fileIdentity(join(dir, 'absent.img'))).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('decodeLoopDevices', () => {
  it('maps names to backing files, marks deleted files and drops unbound devices', () => {
    expect(
      decodeLoopDevices({
        loopdevices: [
          { name: '/dev/loop0', 'back-file': '/var/lib/x/a.img' },
          { name: '/dev/loop1', 'back-file': '/var/lib/x/b.img (deleted)' },
          { name: '/dev/loop2', 'back-file': null },
        ],
      }),
    ).toEqual([
      { name: '/dev/loop0', backFile: '/var/lib/x/a.img', deleted: false },
      { name: '/dev/loop1', backFile: '/var/lib/x/b.img', deleted: true },
    ]);
  });

  it('treats no output as no devices and rejects other shapes', () => {
    expect(decodeLoopDevices(undefined)).toEqual([]);
    expect(decodeLoopDevices({ loopdevices: [] })).toEqual([]);
    expect(() => decodeLoopDevices({ devices: [] })).toThrow('losetup JSON: "loopdevices" is not an array');
    expect(() => decodeLoopDevices({ loopdevices: [{ 'back-file': '/x' }] })).toThrow(
      'losetup JSON: a loop device has no "name"',
    );
  });
});

describe('EmulatedDeviceManager start-up checks', () => {
  const runner = scriptedLosetup([], ['losetup', 'dd']);

  it('refuses to run without root, naming the uid', () => {
    expect(() => new EmulatedDeviceManager({ runner, log: nullLogger, dir: '/nonexistent', uid: 1000 })).toThrow(
      expect.objectContaining({
        kind: 'FailedPrecondition',
        message: 'emulated device mode needs root to attach loop devices; running as uid 1000',
      }),
    );
  });

  it('names the missing tools and their Debian packages', () => {
    expect(
      () =>
        new EmulatedDeviceManager({ runner: scriptedLosetup([], []), log: nullLogger, dir: '/nonexistent', uid: 0 }),
    ).toThrow(
      expect.objectContaining({
        kind: 'FailedPrecondition',
        message:
          'emulated device mode needs losetup, dd, not found on this machine (Debian packages: mount, coreutils)',
      }),
    );
  });

  it('fails setup() when loop devices are not available, saying what to do', async () => {
    const dm = new EmulatedDeviceManager({
      runner,
      log: nullLogger,
      dir: '/nonexistent',
      uid: 0,
      loopControl: '/nonexistent/loop-control',
    });
    await expect(dm.setup()).rejects.toMatchObject({
      kind: 'FailedPrecondition',
      message: expect.stringMatching(
        /^emulated device mode needs loop devices, but \/nonexistent\/loop-control is not usable \(ENOENT.*\); load the "loop" kernel module and run privileged$/,
      ),
    });
  });

  it('rejects a bad pool size at construction', () => {
    expect(() => new EmulatedDeviceManager({ runner, log: nullLogger, dir: '/x', uid: 0, totalSize: -1 })).toThrow(
      'total size must be a positive whole number of bytes, got -1',
    );
  });
});

describe('EmulatedDeviceManager with a scripted losetup', () => {
  let dir = '';
  let backing = '';
  let loopControl = '';
  const lines: string[] = [];
  const log = createLogger({ format: 'json', level: 'debug', sink: (l) => lines.push(l) });

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'pmem-csi-emulated-scripted-')));
    backing = join(dir, 'emulated');
    loopControl = join(dir, 'loop-control');
    await writeFile(loopControl, '');
    lines.length = 0;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const manager = (runner: ScriptedRunner): EmulatedDeviceManager =>
    new EmulatedDeviceManager({ runner, log, dir: backing, totalSize: 64 * MiB, uid: 0, loopControl });

  it('setup() adopts attached files, attaches the others, and detaches nothing', async () => {
    const runner = scriptedLosetup([listReply([])], ['losetup', 'dd']);
    await manager(runner).setup(); // creates the directory
    for (const [name, size] of [
      ['a.img', 8 * MiB],
      ['b.img', 4 * MiB],
      ['notes.txt', 1],
      ['.hidden.img', 1],
    ] as const) {
      await writeFile(join(backing, name), '');
      await truncate(join(backing, name), size);
    }
    runner.add(
      listReply([
        ['/dev/loop5', join(backing, 'a.img')],
        ['/dev/loop6', '/elsewhere/b.img'],
        ['/dev/loop7', `${join(backing, 'c.img')} (deleted)`],
        ['/dev/loop8', join(`${backing}-other`, 'b.img')],
      ]),
      {
        command: 'losetup',
        args: ['--find', '--show', '--nooverlap', join(backing, 'b.img')],
        exact: true,
        stdout: '/dev/loop9\n',
      },
    );
    const dm = manager(runner);
    await dm.setup();
    expect(await dm.listDevices()).toEqual([
      { volumeId: 'a', path: '/dev/loop5', size: 8 * MiB, dax: false },
      { volumeId: 'b', path: '/dev/loop9', size: 4 * MiB, dax: false },
    ]);
    expect(await dm.getCapacity()).toEqual({
      maxVolumeSize: 52 * MiB,
      available: 52 * MiB,
      managed: 64 * MiB,
      total: 64 * MiB,
    });
    expect(runner.unused()).toEqual([]);
    expect(runner.calls.filter((c) => c.args.includes('--detach') || c.args.includes('-d'))).toEqual([]);
    const warnings = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['level'] === 'warn');
    const byWhat = (x: unknown[], y: unknown[]): number => String(x[1]).localeCompare(String(y[1]));
    expect(warnings.map((w) => [w['msg'], w['path'] ?? w['device']]).sort(byWhat)).toEqual([
      ['loop device holds a removed backing file; leaving it attached', '/dev/loop7'],
      ['ignoring unexpected entry in the emulated backing directory', join(backing, '.hidden.img')],
      ['ignoring unexpected entry in the emulated backing directory', join(backing, 'notes.txt')],
    ]);
  });

  it('create: when no loop device can be attached, the file is removed and the space given back', async () => {
    const runner = scriptedLosetup(
      [
        listReply([]),
        { command: 'losetup', args: ['--find'], exitCode: 1, stderr: 'losetup: cannot find an unused loop device' },
        listReply([['/dev/loop3', '/elsewhere/v.img']]), // the clean-up looks for a device bound to our file
      ],
      ['losetup', 'dd'],
    );
    const dm = manager(runner);
    await dm.setup();
    const err = await dm.createDevice({ volumeId: 'v', size: 8 * MiB }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandFailedError);
    expect(await readdir(backing)).toEqual([]);
    expect((await dm.getCapacity()).available).toBe(64 * MiB);
    await expect(dm.getDevice('v')).rejects.toMatchObject({ kind: 'NotFound' });
    expect(runner.unused()).toEqual([]);
    expect(runner.calls.filter((c) => c.args.includes('--detach'))).toEqual([]);
  });

  it('create logs its loop device at debug (the CSI layer logs the volume at info); findDevice runs no losetup', async () => {
    const runner = scriptedLosetup(
      [listReply([]), { command: 'losetup', args: ['--find'], stdout: '/dev/loop9\n' }],
      ['losetup', 'dd'],
    );
    const dm = manager(runner);
    await dm.setup();
    lines.length = 0;
    const dev = await dm.createDevice({ volumeId: 'v', size: 8 * MiB });
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 'debug', msg: 'created emulated device', volumeId: 'v', device: '/dev/loop9' }),
    ]);
    const calls = runner.calls.length;
    expect(await dm.findDevice('v')).toEqual(dev);
    expect(await dm.findDevice('w')).toBeUndefined();
    expect(runner.calls.length).toBe(calls);
  });

  it('allocationSize: 4 MiB units, never below the size a grown volume has; no losetup call, no file touched', async () => {
    const runner = scriptedLosetup(
      [listReply([]), { command: 'losetup', args: ['--find'], stdout: '/dev/loop9\n' }],
      ['losetup', 'dd'],
    );
    const dm = manager(runner);
    await expect(dm.allocationSize(MiB)).rejects.toMatchObject({
      kind: 'FailedPrecondition',
      message: 'emulated device manager: setup() has not been called',
    });
    await dm.setup();
    const dev = await dm.createDevice({ volumeId: 'v', size: 8 * MiB });
    const cap = await dm.getCapacity();
    const calls = runner.calls.length;
    expect(await dm.allocationSize(9 * MiB)).toBe(12 * MiB);
    expect(await dm.allocationSize(9 * MiB, { grow: 'v' })).toBe(12 * MiB);
    expect(await dm.allocationSize(1, { grow: 'v' })).toBe(8 * MiB);
    expect(await dm.allocationSize(128 * MiB)).toBe(128 * MiB); // beyond the 64 MiB pool: rounding only
    await expect(dm.allocationSize(MiB, { grow: 'w' })).rejects.toMatchObject({
      kind: 'NotFound',
      message: 'no device for volume "w"',
    });
    expect(runner.calls.length).toBe(calls);
    expect((await stat(join(backing, 'v.img'))).size).toBe(8 * MiB);
    expect(await dm.getDevice('v')).toEqual(dev);
    expect(await dm.getCapacity()).toEqual(cap);
  });

  it('resize: when the loop device cannot take the new size, file and accounting are rolled back', async () => {
    const runner = scriptedLosetup(
      [
        listReply([]),
        { command: 'losetup', args: ['--find'], stdout: '/dev/loop9\n' },
        {
          command: 'losetup',
          args: ['--set-capacity', '/dev/loop9'],
          exact: true,
          exitCode: 1,
          stderr: 'losetup: /dev/loop9: set capacity failed',
        },
      ],
      ['losetup', 'dd'],
    );
    const dm = manager(runner);
    await dm.setup();
    const dev = await dm.createDevice({ volumeId: 'v', size: 8 * MiB });
    const cap = await dm.getCapacity();
    await expect(dm.resizeDevice('v', 16 * MiB)).rejects.toBeInstanceOf(CommandFailedError);
    expect((await stat(join(backing, 'v.img'))).size).toBe(8 * MiB);
    expect(await dm.getDevice('v')).toEqual(dev);
    expect(await dm.getCapacity()).toEqual(cap);
    expect(runner.unused()).toEqual([]);
  });
});
