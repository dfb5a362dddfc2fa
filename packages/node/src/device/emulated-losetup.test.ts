// The loop-device listing from sysfs: the same devices, backing files, "(deleted)" marks and
// identities as losetup's JSON for real devices (root), and losetup asked only where sysfs cannot
// tell (a backing path that names no file here), checked against a sysfs tree made for the test.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, realpath, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostRunner } from '@pmem-csi/runtime';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import {
  attachLoopDevice,
  detachLoopDevice,
  fileIdentity,
  hostLoopTable,
  listLoopDevices,
  losetupTable,
  meansNotAttached,
  sysfsLoopDevices,
  type LoopDevice,
} from './emulated-losetup.js';

describe('sysfsLoopDevices on a sysfs tree made for the test', () => {
  let dir = '';
  let sys = '';
  let file = '';

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'pmem-sysfs-')));
    sys = join(dir, 'block');
    file = join(dir, 'a.img');
    await writeFile(file, '');
    const loop = async (name: string, backing?: string): Promise<void> => {
      await mkdir(join(sys, name, 'loop'), { recursive: true });
      if (backing !== undefined) await writeFile(join(sys, name, 'loop', 'backing_file'), `${backing}\n`);
    };
    await loop('loop10', file);
    await loop('loop2', `${join(dir, 'gone.img')} (deleted)`);
    await mkdir(join(sys, 'loop3')); // exists, not attached: no loop/ directory
    await loop('loop4'); // loop/ without backing_file
    await loop('sda', file); // not a loop device
  });

  afterAll(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('lists attached loop devices in number order, with the identity of each file and the "(deleted)" mark taken off', async () => {
    expect(await sysfsLoopDevices(sys)).toEqual([
      { name: '/dev/loop2', backFile: join(dir, 'gone.img'), deleted: true },
      { name: '/dev/loop10', backFile: file, deleted: false, backId: await fileIdentity(file) },
    ]);
    expect(await sysfsLoopDevices(sys, undefined, '/dev/loop10')).toEqual([
      { name: '/dev/loop10', backFile: file, deleted: false, backId: await fileIdentity(file) },
    ]);
    expect(await sysfsLoopDevices(sys, undefined, '/dev/loop3')).toEqual([]);
    expect(await sysfsLoopDevices(sys, undefined, '/dev/loop99')).toEqual([]);
    expect(await sysfsLoopDevices(sys, undefined, '/dev/mapper/x')).toBeUndefined();
    expect(await sysfsLoopDevices(join(dir, 'no-sysfs'))).toBeUndefined();
  });

  it('runs no process when sysfs tells everything; asks losetup when a backing path names no file here', async () => {
    const quiet = new ScriptedRunner([]);
    expect((await hostLoopTable(quiet, sys).list()).map((l) => l.name)).toEqual(['/dev/loop2', '/dev/loop10']);
    expect(quiet.calls).toEqual([]);

    await mkdir(join(sys, 'loop7', 'loop'), { recursive: true });
    await writeFile(join(sys, 'loop7', 'loop', 'backing_file'), '/emulated/v1.img\n'); // attached from another mount namespace
    const losetup = {
      loopdevices: [{ name: '/dev/loop7', 'back-file': '/emulated/v1.img', 'back-maj:min': '254:1', 'back-ino': 12 }],
    };
    const asked = new ScriptedRunner([
      { command: 'losetup', args: ['--json', '--list'], stdout: JSON.stringify(losetup) },
    ]);
    expect(await hostLoopTable(asked, sys).list()).toEqual([
      { name: '/dev/loop7', backFile: '/emulated/v1.img', deleted: false, backId: '254:1:12' },
    ]);
    expect(asked.unused()).toEqual([]);
    await rm(join(sys, 'loop7'), { recursive: true });
  });

  it('a runner that carries its own table is asked instead of the host', async () => {
    const own = [{ name: '/dev/loop9', backFile: '/scripted.img', deleted: false }];
    const runner = Object.assign(new ScriptedRunner([]), { loopTable: { list: async () => own } });
    expect(await listLoopDevices(runner)).toBe(own);
    expect(runner.calls).toEqual([]);
  });
});

describe('a loop device detached while it is listed', () => {
  it('the errors the kernel gives for a detached device mean "not attached"; others are errors', () => {
    for (const code of ['ENOENT', 'ENODEV', 'ENXIO']) expect(meansNotAttached(code)).toBe(true);
    for (const code of ['EACCES', 'EIO', 'EISDIR', undefined]) expect(meansNotAttached(code)).toBe(false);
  });

  it('a backing_file whose read fails with ENXIO (a device node without a driver, as root) is listed as not attached', async () => {
    if (process.getuid?.() !== 0) throw new Error('this test needs root (mknod of a device node)');
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'pmem-sysfs-gone-')));
    try {
      const file = join(dir, 'a.img');
      await writeFile(file, '');
      await mkdir(join(dir, 'block', 'loop1', 'loop'), { recursive: true });
      await writeFile(join(dir, 'block', 'loop1', 'loop', 'backing_file'), `${file}\n`);
      await mkdir(join(dir, 'block', 'loop5', 'loop'), { recursive: true });
      // Major 240 is reserved for local use and has no driver here: reading the node fails with ENXIO,
      // as reading backing_file of a device that is being detached fails with ENODEV/ENXIO.
      await new HostRunner().run('mknod', [join(dir, 'block', 'loop5', 'loop', 'backing_file'), 'c', '240', '0']);
      const listed = await sysfsLoopDevices(join(dir, 'block'));
      expect(listed?.map((l) => l.name)).toEqual(['/dev/loop1']);
      expect(await sysfsLoopDevices(join(dir, 'block'), undefined, '/dev/loop5')).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the host listing equals what losetup reports (root, real loop devices)', () => {
  const runner = new HostRunner();
  let dir = '';
  const attached: string[] = [];

  beforeAll(async () => {
    if (runner.which('losetup') === undefined)
      throw new Error('losetup is not installed: this test compares the sysfs listing with it (Debian package: mount)');
    if (process.getuid?.() !== 0) throw new Error('this test needs root (it attaches loop devices)');
    dir = await realpath(await mkdtemp(join(tmpdir(), 'pmem-loops-')));
  });

  afterAll(async () => {
    for (const dev of attached) await detachLoopDevice(runner, dev).catch(() => undefined);
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('two devices, one of whose files was deleted: the same entries as losetup --json --list', async () => {
    const kept = join(dir, 'kept file.img');
    const gone = join(dir, 'gone.img');
    for (const f of [kept, gone]) {
      await writeFile(f, '');
      await truncate(f, 1024 * 1024);
      attached.push(await attachLoopDevice(runner, f));
    }
    await rm(gone);
    // A deleted file's identity is never used (boundTo skips deleted devices) and sysfs cannot give it.
    const comparable = (loops: LoopDevice[]): LoopDevice[] =>
      loops
        .filter((l) => l.backFile.startsWith(`${dir}/`))
        .map((l) => (l.deleted ? { name: l.name, backFile: l.backFile, deleted: true } : l))
        .sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
    const theirs = comparable(await losetupTable(runner).list());
    expect(comparable(await hostLoopTable(runner).list())).toEqual(theirs);
    expect(theirs).toEqual(
      [
        { name: attached[0], backFile: kept, deleted: false, backId: await fileIdentity(kept) },
        { name: attached[1], backFile: gone, deleted: true },
      ].sort((a, b) => String(a.name).localeCompare(String(b.name), 'en', { numeric: true })),
    );
    // Each of them answered by sysfs alone (no fall-back to losetup), as losetup reports it.
    for (const dev of attached) {
      const fromSysfs = await sysfsLoopDevices('/sys/block', undefined, dev);
      expect(fromSysfs).toBeDefined();
      expect(comparable(fromSysfs ?? [])).toEqual(comparable(await losetupTable(runner).list(undefined, dev)));
    }
  });
});
