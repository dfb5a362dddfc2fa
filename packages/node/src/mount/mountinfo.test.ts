// The mount table from /proc/self/mountinfo: the proc(5) format (escapes, optional fields, stacked
// mounts, errors naming the line), and — on this machine, as root — the same entries findmnt lists
// for every mount of the real table, with a bind mount of a subdirectory, paths with a space, a tab
// and a backslash, and two mounts stacked on one point made for the test.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostRunner } from '@pmem-csi/runtime';
import { decodeFindmnt, findMountAt, hostMountTable, listMounts } from './findmnt.js';
import {
  mergedOptions,
  parseMountinfo,
  stackAt,
  toMountEntry,
  unescapeMountinfo,
  type MountEntry,
} from '../device/mountinfo.js';

const COLUMNS = 'TARGET,SOURCE,FSTYPE,OPTIONS,VFS-OPTIONS,FS-OPTIONS';

describe('parseMountinfo', () => {
  const text = [
    '22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw',
    '36 35 98:0 /mnt1 /mnt\\0402 rw,noatime master:1 propagate_from:2 - ext3 /dev/root rw,errors=continue',
    '40 22 7:3 / /a\\011b\\012c\\134d ro,relatime - ext4 /dev/loop3 rw,stripe=512',
    '41 40 0:30 / /a\\011b\\012c\\134d rw - tmpfs my\\040tmp rw,size=1024k',
    '50 22 0:31 / /gone\\040(deleted) rw - tmpfs tmpfs rw',
  ].join('\n');

  it('decodes every field, unescapes paths, keeps optional fields, strips the " (deleted)" mark', () => {
    const lines = parseMountinfo(`${text}\n`);
    expect(lines[1]).toEqual({
      mountId: 36,
      parentId: 35,
      device: '98:0',
      root: '/mnt1',
      mountPoint: '/mnt 2',
      vfsOptions: ['rw', 'noatime'],
      optionalFields: ['master:1', 'propagate_from:2'],
      fstype: 'ext3',
      source: '/dev/root',
      fsOptions: ['rw', 'errors=continue'],
    });
    expect(lines[0]?.optionalFields).toEqual(['shared:12']);
    expect(lines[2]?.mountPoint).toBe('/a\tb\nc\\d');
    expect(lines[2]?.optionalFields).toEqual([]);
    expect(lines[3]?.source).toBe('my tmp');
    expect(lines[4]?.mountPoint).toBe('/gone');
    expect(unescapeMountinfo('a\\040b\\134\\x')).toBe('a b\\\\x');
  });

  it('as findmnt lists them: SOURCE[root] for a subtree, merged options with one rw/ro flag', () => {
    const [proc, bind, ro] = parseMountinfo(text).map(toMountEntry);
    expect(proc).toEqual({
      target: '/proc',
      source: 'proc',
      fstype: 'proc',
      options: ['rw', 'nosuid', 'nodev', 'noexec', 'relatime'],
      vfsOptions: ['rw', 'nosuid', 'nodev', 'noexec', 'relatime'],
      fsOptions: ['rw'],
    });
    expect(bind?.source).toBe('/dev/root[/mnt1]');
    expect(bind?.options).toEqual(['rw', 'noatime', 'errors=continue']);
    expect(ro?.options).toEqual(['ro', 'relatime', 'stripe=512']);
    expect(mergedOptions(['rw', 'relatime'], ['ro'])).toEqual(['ro', 'relatime']); // fs read-only after errors
    expect(mergedOptions(['rw'], ['rw'])).toEqual(['rw']);
  });

  it('stacked mounts: bottom first by the parent links, whatever the file order', () => {
    const chain = parseMountinfo(
      ['59 58 0:39 / /s rw - tmpfs top rw', '58 22 0:38 / /s rw - tmpfs bottom rw'].join('\n'),
    );
    expect(stackAt(chain, '/s').map((m) => m.source)).toEqual(['bottom', 'top']);
    expect(stackAt(chain, '/other')).toEqual([]);
    // Two mounts on /s with the same parent are not one chain: the file's order, as findmnt --list shows.
    const siblings = parseMountinfo(
      ['60 22 0:40 / /s rw - tmpfs first rw', '58 22 0:38 / /s rw - tmpfs second rw'].join('\n'),
    );
    expect(stackAt(siblings, '/s').map((m) => m.source)).toEqual(['first', 'second']);
  });

  it('a line that does not follow proc(5) is an error naming the line and what was expected', () => {
    const bad =
      (line: string): (() => unknown) =>
      () =>
        parseMountinfo(`22 1 0:21 / /proc rw - proc proc rw\n${line}\n`);
    expect(bad('x 1 0:21 / /p rw - proc proc rw')).toThrow(
      '/proc/self/mountinfo line 2 ("x 1 0:21 / /p rw - proc proc rw"): expected a mount ID (decimal) as field 1',
    );
    expect(bad('23 1 0-21 / /p rw - proc proc rw')).toThrow(
      'line 2 ("23 1 0-21 / /p rw - proc proc rw"): expected "major:minor" as field 3',
    );
    expect(bad('23 1 0:21 / p rw - proc proc rw')).toThrow('expected an absolute mount point as field 5');
    expect(bad('23 1 0:21 / /p rw shared:1 proc proc rw')).toThrow(
      'expected the " - " separator after the optional fields',
    );
    expect(bad('23 1 0:21 / /p rw - proc proc')).toThrow(
      'expected filesystem type, source and superblock options after " - " (found 2 fields)',
    );
    expect(bad('')).toThrow('line 2 (""): expected a mount ID (decimal) as field 1');
  });
});

/** Run findmnt (it must exist: this test compares against it) and decode its JSON. */
async function findmnt(args: string[]): Promise<MountEntry[]> {
  const res = await new HostRunner().run('findmnt', ['-J', '-o', COLUMNS, ...args], { okExitCodes: [0, 1] });
  return res.stdout.trim() === '' ? [] : decodeFindmnt(JSON.parse(res.stdout));
}

describe('the host mount table equals what findmnt lists', () => {
  const runner = new HostRunner();
  let dir = '';
  const mounted: string[] = [];
  let paths: { spaced: string; bind: string; odd: string; stack: string } | undefined;

  beforeAll(async () => {
    if (runner.which('findmnt') === undefined)
      throw new Error(
        'findmnt is not installed: this test compares the mountinfo parser with it (Debian package: mount)',
      );
    if (process.getuid?.() !== 0) throw new Error('this test needs root (it makes bind and tmpfs mounts to compare)');
    dir = await mkdtemp(join(tmpdir(), 'pmem-mountinfo-'));
    const spaced = join(dir, 'with space');
    const bind = join(dir, 'bind');
    const odd = join(dir, 'tab\there back\\slash');
    const stack = join(dir, 'stack');
    for (const d of [spaced, bind, odd, stack]) await mkdir(d);
    const mount = async (args: string[], target: string): Promise<void> => {
      await runner.run('mount', [...args, target]);
      mounted.unshift(target);
    };
    await mount(['-t', 'tmpfs', '-o', 'size=1m,mode=0755', 'pmem test'], spaced);
    await mkdir(join(spaced, 'sub dir'));
    await mount(['--bind', join(spaced, 'sub dir')], bind);
    await mount(['-o', 'remount,bind,ro'], bind);
    await mount(['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs'], odd);
    await mount(['-t', 'tmpfs', '-o', 'size=1m', 'lower'], stack);
    await mount(['-t', 'tmpfs', '-o', 'size=2m', 'upper'], stack);
    paths = { spaced, bind, odd, stack };
  });

  afterAll(async () => {
    for (const target of mounted) await runner.run('umount', [target]).catch(() => undefined);
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('every mount of the real table, field by field (retried while other processes change the table)', async () => {
    let ours: MountEntry[] = [];
    let theirs: MountEntry[] = [];
    for (let attempt = 0; attempt < 10; attempt++) {
      const before = await listMounts(runner);
      theirs = await findmnt(['--list']);
      ours = await listMounts(runner);
      if (JSON.stringify(before) === JSON.stringify(ours)) break;
    }
    expect(ours.length).toBeGreaterThan(4);
    expect(ours).toEqual(theirs);
    // The mounts made above are in it as findmnt shows them.
    const p = paths!;
    expect(ours.find((m) => m.target === p.bind)).toMatchObject({
      source: 'pmem test[/sub dir]',
      fstype: 'tmpfs',
      vfsOptions: expect.arrayContaining(['ro']),
    });
    expect(ours.some((m) => m.target === p.odd)).toBe(true);
  });

  it('findMountAt equals findmnt --mountpoint: a space, a tab and a backslash, a bind, the top of a stack, a path that is no mount', async () => {
    const p = paths!;
    for (const path of [
      p.spaced,
      p.bind,
      p.odd,
      p.stack,
      `${p.stack}/`,
      join(dir, 'bind', '..', 'stack'),
      dir,
      '/proc',
    ]) {
      const expected = (await findmnt(['--mountpoint', path])).at(-1);
      expect({ path, entry: await findMountAt(runner, path) }).toEqual({ path, entry: expected });
    }
    expect((await findMountAt(runner, p.stack))?.source).toBe('upper');
    expect((await hostMountTable.at(p.stack, {})).map((m) => m.source)).toEqual(['lower', 'upper']);
    expect(await findMountAt(runner, join(dir, 'missing'))).toBeUndefined();
  });
});
