// The leak checker's decisions on scripted snapshots (no devices, no processes): only what is new
// since the file started and lies below a watched root (loop devices, mounts, volume files), or
// was started by the file (tagged or a descendant of the Jest process), counts.
import { describe, expect, it } from '@jest/globals';
import { descendsFrom, findLeaks, formatClean, formatLeaks } from './diff.js';
import type { HostSnapshot, Proc } from './snapshot.js';

const ROOTS = ['/tmp', '/var/lib/kubelet', '/var/lib/pmem-csi.intel.com'];
const JEST = 1000;

function proc(pid: number, ppid: number, command: string, o: Partial<Proc> = {}): Proc {
  return { pid, ppid, startTicks: String(pid * 10), state: 'S', command, ...o };
}

const base = (): HostSnapshot => ({
  takenAtMs: 1_000_000,
  roots: ROOTS,
  loops: [{ device: '/dev/loop0', backingFile: '/tmp/other-run/leftover.img' }],
  mounts: [
    { target: '/', source: '/dev/vda', fstype: 'ext4' },
    { target: '/tmp/other-run/mnt', source: '/dev/loop0', fstype: 'ext4' },
  ],
  processes: [
    proc(1, 0, '/sbin/init'),
    proc(JEST, 1, 'node jest'),
    proc(500, 1, 'pmem-csi-driver --mode node (older)'),
  ],
  tagged: new Set(),
  imageFiles: [],
  truncated: [],
});

function after(change: Partial<HostSnapshot>): HostSnapshot {
  return { ...base(), takenAtMs: 2_000_000, ...change };
}

describe('findLeaks', () => {
  it('the same host before and after: nothing', () => {
    expect(findLeaks(base(), after({}), JEST)).toEqual([]);
  });

  it('what existed before is never counted, however it looks', () => {
    const before = base();
    expect(findLeaks(before, after({ loops: before.loops, mounts: before.mounts }), JEST)).toEqual([]);
  });

  it('a new loop device below a root, with a deleted backing file too, and one on a deleted file anywhere; not one outside the roots', () => {
    const loops = [
      ...base().loops,
      { device: '/dev/loop1', backingFile: '/tmp/pmem-csi-e2e-crash/nodes/c1/state/emulated/v1.img' },
      { device: '/dev/loop2', backingFile: '/var/lib/pmem-csi.intel.com/emulated/v2.img (deleted)' },
      { device: '/dev/loop3', backingFile: '/srv/images/not-ours.img' },
      { device: '/dev/loop4', backingFile: '/tmpfoo/not-below-tmp.img' },
      // Attached in a driver container, file removed after the container was gone: outside every root.
      { device: '/dev/loop5', backingFile: '/emulated/pvc-91-572e.img (deleted)' },
    ];
    expect(findLeaks(base(), after({ loops }), JEST)).toEqual([
      { kind: 'loop device', what: '/dev/loop1 -> /tmp/pmem-csi-e2e-crash/nodes/c1/state/emulated/v1.img' },
      { kind: 'loop device', what: '/dev/loop2 -> /var/lib/pmem-csi.intel.com/emulated/v2.img (deleted)' },
      { kind: 'loop device', what: '/dev/loop5 -> /emulated/pvc-91-572e.img (deleted)' },
    ]);
  });

  it('a loop device re-bound to another file is new', () => {
    const loops = [{ device: '/dev/loop0', backingFile: '/tmp/pmem-csi-e2e-fuzz/v.img' }];
    expect(findLeaks(base(), after({ loops }), JEST)).toEqual([
      { kind: 'loop device', what: '/dev/loop0 -> /tmp/pmem-csi-e2e-fuzz/v.img' },
    ]);
  });

  it('a new mount at or below a root, also a second one over a mount point that existed', () => {
    const mounts = [
      ...base().mounts,
      { target: '/tmp/other-run/mnt', source: '/dev/loop0', fstype: 'ext4' },
      { target: '/var/lib/kubelet/pods/p1/volumes/kubernetes.io~csi/pv/mount', source: '/dev/loop7', fstype: 'xfs' },
      { target: '/mnt/elsewhere', source: 'tmpfs', fstype: 'tmpfs' },
    ];
    expect(findLeaks(base(), after({ mounts }), JEST)).toEqual([
      { kind: 'mount', what: '/tmp/other-run/mnt (ext4 from /dev/loop0)' },
      { kind: 'mount', what: '/var/lib/kubelet/pods/p1/volumes/kubernetes.io~csi/pv/mount (xfs from /dev/loop7)' },
    ]);
  });

  it('processes: tagged ones (even adopted by init) and descendants of Jest; not others, not zombies, not Jest', () => {
    const processes = [
      ...base().processes,
      proc(2001, 1, 'kube-apiserver --etcd-servers=http://127.0.0.1:2379'), // adopted, tagged
      proc(2002, JEST, 'node packages/driver/src/main.ts --mode controller'), // child of Jest
      proc(2003, 2002, 'losetup --find --show'), // grandchild
      proc(2004, 1, 'pmem-csi-driver --mode node'), // someone else's, started meanwhile
      proc(2005, JEST, 'csi-sanity', { state: 'Z' }), // exited, not reaped yet
    ];
    expect(findLeaks(base(), after({ processes, tagged: new Set([2001]) }), JEST)).toEqual([
      { kind: 'process', what: 'pid 2001 (parent 1): kube-apiserver --etcd-servers=http://127.0.0.1:2379' },
      { kind: 'process', what: 'pid 2002 (parent 1000): node packages/driver/src/main.ts --mode controller' },
      { kind: 'process', what: 'pid 2003 (parent 2002): losetup --find --show' },
    ]);
  });

  it('a pid reused by a new process is a new process', () => {
    const processes = [
      proc(1, 0, '/sbin/init'),
      proc(JEST, 1, 'node jest'),
      proc(500, JEST, 'kwok', { startTicks: '99999' }),
    ];
    expect(findLeaks(base(), after({ processes }), JEST)).toEqual([
      { kind: 'process', what: 'pid 500 (parent 1000): kwok' },
    ]);
  });

  it('volume files born while the file ran, below a root', () => {
    const imageFiles = [
      { path: '/tmp/pmem-csi-e2e-crash/nodes/c1/state/emulated/v1.img', bornMs: 1_500_000 },
      { path: '/tmp/pmem-csi-e2e-crash/old.img', bornMs: 999_999 },
      { path: '/home/x/y.img', bornMs: 1_500_000 },
    ];
    expect(findLeaks(base(), after({ imageFiles }), JEST)).toEqual([
      { kind: 'volume file', what: '/tmp/pmem-csi-e2e-crash/nodes/c1/state/emulated/v1.img' },
    ]);
  });

  it('reports in a fixed order: loop devices, mounts, processes, volume files', () => {
    const kinds = findLeaks(
      base(),
      after({
        imageFiles: [{ path: '/tmp/a/v.img', bornMs: 1_500_000 }],
        processes: [...base().processes, proc(3000, JEST, 'sleep 60')],
        mounts: [...base().mounts, { target: '/tmp/a/m', source: 'tmpfs', fstype: 'tmpfs' }],
        loops: [...base().loops, { device: '/dev/loop9', backingFile: '/tmp/a/v.img' }],
      }),
      JEST,
    ).map((l) => l.kind);
    expect(kinds).toEqual(['loop device', 'mount', 'process', 'volume file']);
  });
});

describe('descendsFrom', () => {
  it('follows parents, and stops at a cycle of bad data', () => {
    const procs = new Map([
      [10, proc(10, JEST, 'a')],
      [11, proc(11, 10, 'b')],
      [20, proc(20, 21, 'loop')],
      [21, proc(21, 20, 'loop')],
    ]);
    expect(descendsFrom(procs.get(11) as Proc, JEST, procs)).toBe(true);
    expect(descendsFrom(procs.get(20) as Proc, JEST, procs)).toBe(false);
  });
});

describe('reports', () => {
  it('names the file and each leak on its own line', () => {
    expect(
      formatLeaks('src/integration/x.e2e.test.ts', [
        { kind: 'loop device', what: '/dev/loop1 -> /tmp/a/v.img' },
        { kind: 'process', what: 'pid 7 (parent 1): sleep 60' },
      ]),
    ).toBe(
      [
        'leak check: src/integration/x.e2e.test.ts left 2 thing(s) behind that it created (new since it started):',
        '  loop device: /dev/loop1 -> /tmp/a/v.img',
        '  process: pid 7 (parent 1): sleep 60',
      ].join('\n'),
    );
  });

  it('a clean file: one line with what was looked at and the time it took', () => {
    expect(formatClean('src/x.test.ts', after({ truncated: ['/tmp/big'] }), 42)).toBe(
      'leak check: src/x.test.ts left nothing (1 loop devices, 2 mounts, 3 processes on the host; 42 ms; volume-file search stopped early in /tmp/big)',
    );
  });
});
