// The mount helpers with a scripted runner: exact command lines, findmnt/blkid parsing, mount flag
// validation, and the rollback of a read-only bind mount whose remount fails.
import { describe, expect, it } from '@jest/globals';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import { fsTypeOf, MiB } from '@pmem-csi/csi';
import {
  checkFilesystemFits,
  makeFilesystem,
  mkfsCommand,
  parseBlkidExport,
  probeDevice,
  XFS_MIN_BYTES,
} from './filesystem.js';
import {
  decodeFindmnt,
  findMountAt,
  findMountsUnder,
  findmntTable,
  isWholeFilesystem,
  sourceDevice,
  type RunnerWithMountTable,
} from './findmnt.js';
import { bindMount, mountArgs, unmountAll } from './mount.js';
import { filesystemMountOptions, validateMountFlags } from './mount-options.js';

/** A scripted runner whose mount table is what its scripted findmnt answers (not the host's). */
function scriptedHost(runner: ScriptedRunner): ScriptedRunner & RunnerWithMountTable {
  return Object.assign(runner, { mountTable: findmntTable(runner) });
}

function findmntJson(...entries: Array<Record<string, string>>): string {
  return JSON.stringify({ filesystems: entries });
}

describe('findmnt', () => {
  const entry = {
    target: '/stage',
    source: '/dev/loop3',
    fstype: 'ext4',
    options: 'rw,relatime',
    'vfs-options': 'rw,relatime',
    'fs-options': 'rw',
  };

  it('decodes flat and nested output; no output means no mounts', () => {
    expect(decodeFindmnt(undefined)).toEqual([]);
    expect(decodeFindmnt(JSON.parse(findmntJson(entry)))).toEqual([
      {
        target: '/stage',
        source: '/dev/loop3',
        fstype: 'ext4',
        options: ['rw', 'relatime'],
        vfsOptions: ['rw', 'relatime'],
        fsOptions: ['rw'],
      },
    ]);
    const nested = {
      filesystems: [
        {
          target: '/',
          source: '/dev/vda',
          fstype: 'ext4',
          options: 'rw',
          children: [{ target: '/a', source: 'tmpfs', fstype: 'tmpfs', options: 'rw' }],
        },
      ],
    };
    expect(decodeFindmnt(nested).map((m) => m.target)).toEqual(['/', '/a']);
    expect(() => decodeFindmnt({ nope: 1 })).toThrow('"filesystems" is not an array');
  });

  it('findMountAt asks for exactly the mount point and treats exit code 1 as "not mounted"', async () => {
    const runner = scriptedHost(
      new ScriptedRunner([
        {
          command: 'findmnt',
          args: ['-J', '-o', 'TARGET,SOURCE,FSTYPE,OPTIONS,VFS-OPTIONS,FS-OPTIONS', '--mountpoint', '/stage'],
          exact: true,
          stdout: findmntJson(entry, { ...entry, source: '/dev/loop4' }),
        },
        { command: 'findmnt', args: ['-J'], exitCode: 1 },
      ]),
    );
    expect((await findMountAt(runner, '/stage'))?.source).toBe('/dev/loop4'); // the topmost of stacked mounts
    expect(await findMountAt(runner, '/missing')).toBeUndefined();
    expect(runner.unused()).toEqual([]);
  });

  it('findMountsUnder lists a subtree deepest first', async () => {
    const runner = scriptedHost(
      new ScriptedRunner([
        {
          command: 'findmnt',
          args: ['-J', '--list'],
          stdout: findmntJson({ ...entry, target: '/t' }, { ...entry, target: '/t/a' }, { ...entry, target: '/tx' }),
        },
      ]),
    );
    expect((await findMountsUnder(runner, '/t')).map((m) => m.target)).toEqual(['/t/a', '/t']);
  });

  it('sourceDevice and isWholeFilesystem read bind-mount sources', () => {
    expect(sourceDevice('/dev/loop3')).toBe('/dev/loop3');
    expect(sourceDevice('/dev/vda[/some/dir]')).toBe('/dev/vda');
    expect(sourceDevice('devtmpfs[/loop3]')).toBeUndefined();
    const m = decodeFindmnt(JSON.parse(findmntJson({ ...entry, source: '/dev/vda[/some/dir]' })))[0]!;
    expect(isWholeFilesystem(m)).toBe(false);
    expect(isWholeFilesystem({ ...m, source: '/dev/loop3' })).toBe(true);
  });
});

describe('filesystems', () => {
  it('mkfs command lines follow the DAX geometry', () => {
    expect(mkfsCommand('ext4', '/dev/x', 64 * MiB)).toEqual({
      command: 'mkfs.ext4',
      args: ['-b', '4096', '-E', 'stride=512,stripe_width=512', '-F', '/dev/x'],
    });
    expect(mkfsCommand('xfs', '/dev/x', 512 * MiB)).toEqual({
      command: 'mkfs.xfs',
      args: ['-b', 'size=4096', '-m', 'reflink=0', '-d', 'su=2m,sw=1,agcount=4', '-f', '/dev/x'],
    });
    expect(mkfsCommand('xfs', '/dev/x', 2048 * MiB).args).toContain('su=2m,sw=1');
  });

  it('xfs below 300 MiB → OutOfRange naming the volume', () => {
    expect(() => checkFilesystemFits('xfs', XFS_MIN_BYTES - 4096, 'v1')).toThrow(
      `volume "v1" has ${XFS_MIN_BYTES - 4096} bytes, but xfs needs at least ${XFS_MIN_BYTES} bytes (300 MiB); use ext4 or a larger volume`,
    );
    expect(() => checkFilesystemFits('xfs', XFS_MIN_BYTES, 'v1')).not.toThrow();
    expect(() => checkFilesystemFits('ext4', 4 * MiB, 'v1')).not.toThrow();
  });

  it('fs types: "" is ext4, others are refused by name', () => {
    expect(fsTypeOf('', 'f')).toBe('ext4');
    expect(fsTypeOf('xfs', 'f')).toBe('xfs');
    expect(() => fsTypeOf('zfs', 'f')).toThrow('f "zfs" is not supported; allowed: ext4, xfs (or empty for ext4)');
  });

  it('probeDevice: exit code 2 = blank; TYPE and PTTYPE are read', async () => {
    expect(parseBlkidExport('DEVNAME=/dev/x\nTYPE=xfs\n')).toEqual({ DEVNAME: '/dev/x', TYPE: 'xfs' });
    const runner = new ScriptedRunner([
      { command: 'blkid', args: ['-p', '-o', 'export', '/dev/a'], exact: true, exitCode: 2 },
      { command: 'blkid', args: ['-p', '-o', 'export', '/dev/b'], stdout: 'DEVNAME=/dev/b\nUUID=1\nTYPE=ext4\n' },
      { command: 'blkid', args: ['-p', '-o', 'export', '/dev/c'], stdout: 'DEVNAME=/dev/c\nPTTYPE=dos\n' },
    ]);
    expect(await probeDevice(runner, '/dev/a')).toBeUndefined();
    expect(await probeDevice(runner, '/dev/b')).toEqual({ type: 'ext4' });
    expect(await probeDevice(runner, '/dev/c')).toEqual({ ptType: 'dos' });
  });

  it('makeFilesystem runs the mkfs command', async () => {
    const runner = new ScriptedRunner([
      { command: 'mkfs.ext4', args: ['-b', '4096', '-E', 'stride=512,stripe_width=512', '-F', '/dev/x'], exact: true },
    ]);
    await makeFilesystem(runner, { fsType: 'ext4', device: '/dev/x', sizeBytes: 64 * MiB });
    expect(runner.unused()).toEqual([]);
  });
});

describe('mount and umount', () => {
  it('mountArgs: type, joined options, source, target', () => {
    expect(mountArgs({ source: '/dev/x', target: '/t', fsType: 'ext4', options: ['dax', 'noatime'] })).toEqual([
      '-t',
      'ext4',
      '-o',
      'dax,noatime',
      '/dev/x',
      '/t',
    ]);
    expect(mountArgs({ source: '/dev/x', target: '/t' })).toEqual(['/dev/x', '/t']);
  });

  it('a read-only bind mount is a bind plus a remount; a failed remount removes the bind', async () => {
    const ok = new ScriptedRunner([
      { command: 'mount', args: ['--bind', '/s', '/t'], exact: true },
      { command: 'mount', args: ['-o', 'remount,bind,ro', '/t'], exact: true },
    ]);
    await bindMount(ok, { source: '/s', target: '/t', readonly: true });
    expect(ok.unused()).toEqual([]);
    const failing = new ScriptedRunner([
      { command: 'mount', args: ['--bind'] },
      { command: 'mount', args: ['-o', 'remount,bind,ro'], exitCode: 32, stderr: 'permission denied' },
      { command: 'umount', args: ['/t'], exact: true },
    ]);
    await expect(bindMount(failing, { source: '/s', target: '/t', readonly: true })).rejects.toThrow(
      'mount -o remount,bind,ro /t: exit code 32: permission denied',
    );
    expect(failing.unused()).toEqual([]);
  });

  it('unmountAll unmounts stacked mounts until none is left', async () => {
    const mounted = {
      command: 'findmnt',
      args: ['-J'],
      stdout: findmntJson({ target: '/t', source: '/dev/x', fstype: 'ext4', options: 'rw' }),
    };
    const runner = scriptedHost(
      new ScriptedRunner([
        mounted,
        { command: 'umount', args: ['/t'] },
        { ...mounted },
        { command: 'umount', args: ['/t'] },
        { command: 'findmnt', exitCode: 1 },
      ]),
    );
    expect(await unmountAll(runner, '/t')).toBe(2);
    expect(runner.unused()).toEqual([]);
  });
});

describe('mount flags', () => {
  const F = 'volume_capability.mount.mount_flags';

  it('accepts single options', () => {
    expect(validateMountFlags(['noatime', 'nodiratime', 'errors=remount-ro', 'dax=never'], F)).toEqual([
      'noatime',
      'nodiratime',
      'errors=remount-ro',
      'dax=never',
    ]);
  });

  it.each([
    [
      'noatime,dax',
      `${F}[0] "noatime,dax" is not a single mount option: one option per entry (no commas, spaces or quotes, not starting with "-"), e.g. "noatime"`,
    ],
    [
      '-o',
      `${F}[0] "-o" is not a single mount option: one option per entry (no commas, spaces or quotes, not starting with "-"), e.g. "noatime"`,
    ],
    [
      'a b',
      `${F}[0] "a b" is not a single mount option: one option per entry (no commas, spaces or quotes, not starting with "-"), e.g. "noatime"`,
    ],
    [
      '',
      `${F}[0] "" is not a single mount option: one option per entry (no commas, spaces or quotes, not starting with "-"), e.g. "noatime"`,
    ],
    ['bind', `${F}[0] "bind" is not allowed: the driver decides how volumes are mounted`],
    ['dax=sometimes', `${F}[0] "dax=sometimes" is not a dax mode; allowed: dax, dax=always, dax=never, dax=inode`],
  ])('refuses %j', (flag, message) => {
    expect(() => validateMountFlags([flag], F)).toThrow(message);
  });

  it('refuses dax more than once', () => {
    expect(() => validateMountFlags(['dax', 'dax'], F)).toThrow(
      `${F} sets dax more than once (dax, dax); give at most one dax option (the driver adds "dax" itself when the device supports it)`,
    );
  });

  it('adds dax for DAX devices unless a flag chose a dax mode; dax on a non-DAX volume is refused', () => {
    expect(filesystemMountOptions(['noatime'], true, F)).toEqual(['dax', 'noatime']);
    expect(filesystemMountOptions(['noatime'], false, F)).toEqual(['noatime']);
    expect(filesystemMountOptions(['dax'], true, F)).toEqual(['dax']);
    expect(filesystemMountOptions(['dax=never'], true, F)).toEqual(['dax=never']);
    expect(() => filesystemMountOptions(['dax=always'], false, F)).toThrow(
      `${F} asks for "dax=always", but this volume cannot use dax (emulated device or usage=FileIO); remove the option`,
    );
  });
});
