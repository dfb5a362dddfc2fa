// The leak checker's host readings: the parsers on recorded text (mountinfo with an escaped space,
// /proc/<pid>/stat with a command name holding spaces and parentheses), and the real snapshot on
// this machine with a process it started itself (tagged, then gone) and volume files made in a
// temporary directory — no loop device or mount is needed for these.
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findLeaks } from './diff.js';
import {
  commandLine,
  environHas,
  findImageFiles,
  isBelow,
  parseMountInfo,
  parseStat,
  procKey,
  takeSnapshot,
} from './snapshot.js';

describe('parsers', () => {
  it('mountinfo: mount point, type and source, octal escapes decoded', () => {
    const text = [
      '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw',
      '90 22 7:3 / /tmp/pmem\\040csi/mnt rw,relatime shared:40 - ext4 /dev/loop3 rw,dax=always',
      '91 22 0:50 / /var/lib/kubelet/pods/x rw - tmpfs tmpfs rw,size=1024k',
      'garbage',
      '',
    ].join('\n');
    expect(parseMountInfo(text)).toEqual([
      { target: '/', fstype: 'ext4', source: '/dev/vda' },
      { target: '/tmp/pmem csi/mnt', fstype: 'ext4', source: '/dev/loop3' },
      { target: '/var/lib/kubelet/pods/x', fstype: 'tmpfs', source: 'tmpfs' },
    ]);
  });

  it('stat: pid, state, parent and start time, whatever the command name holds', () => {
    const fields = [
      'S',
      '1',
      '4242',
      '4242',
      '0',
      '-1',
      '4194560',
      '1',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '20',
      '0',
      '1',
      '0',
      '123456',
    ];
    expect(parseStat(`4243 (my (odd) name) ${fields.join(' ')} 999 more`)).toEqual({
      pid: 4243,
      state: 'S',
      ppid: 1,
      startTicks: '123456',
    });
    expect(parseStat('not a stat line')).toBeUndefined();
    expect(parseStat('12 (x) S 1')).toBeUndefined();
  });

  it('command lines and environments are NUL-separated', () => {
    expect(commandLine('node\0--import\0tsx\0main.ts\0')).toBe('node --import tsx main.ts');
    expect(commandLine(`a\0${'b'.repeat(400)}`, 10)).toBe('a bbbbbbbb…');
    expect(environHas('A=1\0PMEM_CSI_LEAK_TAG=7-ab\0', 'PMEM_CSI_LEAK_TAG', '7-ab')).toBe(true);
    expect(environHas('A=1\0PMEM_CSI_LEAK_TAG=7-abc\0', 'PMEM_CSI_LEAK_TAG', '7-ab')).toBe(false);
  });

  it('below a root: the root itself or a path under it, not a sibling with the same prefix', () => {
    expect(isBelow('/tmp', ['/tmp'])).toBe(true);
    expect(isBelow('/tmp/a/b', ['/tmp'])).toBe(true);
    expect(isBelow('/tmpx/a', ['/tmp'])).toBe(false);
    expect(isBelow('/var/lib/pmem-csi.intel.com/emulated/v.img', ['/var/lib/pmem-csi.intel.com'])).toBe(true);
  });
});

describe('takeSnapshot on this machine', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmem-csi-leaks-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds a process the file started by its tag, and nothing once it is gone', async () => {
    const tag = { name: 'PMEM_CSI_LEAK_TAG', value: `snapshot-test-${process.pid}` };
    const before = await takeSnapshot();
    // Detached and not a child of Jest's process tree in the end: only the tag says it is ours.
    const child = spawn('sleep', ['30'], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, [tag.name]: tag.value },
    });
    const exited = new Promise((r) => child.once('exit', r));
    try {
      const during = await takeSnapshot({ before, tag });
      expect(during.tagged).toEqual(new Set([child.pid]));
      const p = during.processes.find((q) => q.pid === child.pid);
      expect(p?.command).toBe('sleep 30');
      expect(findLeaks(before, during, -1)).toEqual([
        { kind: 'process', what: `pid ${child.pid} (parent ${process.pid}): sleep 30` },
      ]);
      expect(before.processes.map(procKey)).not.toContain(procKey(p ?? { pid: 0, startTicks: '' }));
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const after = await takeSnapshot({ before, tag });
    expect(findLeaks(before, after, -1).filter((l) => l.what.includes(`pid ${child.pid} `))).toEqual([]);
  });

  it('sees the mounts and processes of this machine', async () => {
    const s = await takeSnapshot();
    expect(s.mounts.some((m) => m.target === '/')).toBe(true);
    expect(s.processes.some((p) => p.pid === process.pid)).toBe(true);
    expect(s.roots[0]).toBe(tmpdir());
  });

  it('volume files: born since the start, below directories that changed; older ones and other names not', async () => {
    const old = join(dir, 'old');
    mkdirSync(join(old, 'emulated'), { recursive: true });
    writeFileSync(join(old, 'emulated', 'before.img'), '');
    const since = Date.now() + 50;
    await new Promise((r) => setTimeout(r, 100));
    const fresh = join(dir, 'fresh', 'nodes', 'n1', 'state', 'emulated');
    mkdirSync(fresh, { recursive: true });
    writeFileSync(join(fresh, 'v1.img'), '');
    writeFileSync(join(fresh, 'v1.json'), '{}');
    mkdirSync(join(dir, 'fresh', 'node_modules'));
    writeFileSync(join(dir, 'fresh', 'node_modules', 'skipped.img'), '');
    // A directory that did not change since (its mtime set back): not searched.
    const stale = join(dir, 'stale');
    mkdirSync(stale);
    writeFileSync(join(stale, 'hidden.img'), '');
    utimesSync(stale, new Date(since - 60_000), new Date(since - 60_000));
    const { files } = await findImageFiles([dir], since);
    expect(files.map((f) => f.path)).toEqual([join(fresh, 'v1.img')]);
  });
});
