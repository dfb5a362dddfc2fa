import { nodeTools } from '@pmem-csi/csi';
import { checkTools, type CheckToolsDeps } from './check-tools.js';

function run(argv: string[], have: (tool: string) => boolean): { code: number; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const deps: CheckToolsDeps = {
    runner: { which: (t) => (have(t) ? `/usr/sbin/${t}` : undefined) },
    toolsOf: nodeTools,
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  };
  return { code: checkTools(argv, deps), out, err };
}

describe('check-tools', () => {
  it('looks up every tool of every device mode and says where it is', () => {
    const r = run([], () => true);
    expect(r.code).toBe(0);
    const lvm = nodeTools('lvm');
    expect(r.out.filter((l) => l.startsWith('lvm '))).toEqual(lvm.map((t) => `lvm ${t} /usr/sbin/${t}`));
    expect(r.out.filter((l) => l.startsWith('fake '))).toEqual([]);
    const total = ['lvm', 'direct', 'emulated', 'fake'] as const;
    expect(r.out.at(-1)).toBe(
      `check-tools: ${total.reduce((n, m) => n + nodeTools(m).length, 0)} tool lookups in device modes lvm, direct, emulated, fake: all found`,
    );
    expect(r.err).toEqual([]);
  });

  it('exits 1 naming each missing tool once, with its Debian package', () => {
    const r = run(['direct', 'emulated'], (t) => t !== 'ndctl' && t !== 'xfs_io');
    expect(r.code).toBe(1);
    expect(r.out).toContain('direct ndctl MISSING (Debian package ndctl)');
    expect(r.out).toContain('emulated xfs_io MISSING (Debian package xfsprogs)');
    expect(r.out).toContain('emulated losetup /usr/sbin/losetup');
    expect(r.out.some((l) => l.startsWith('lvm '))).toBe(false);
    expect(r.err).toEqual([
      'check-tools: ' +
        `${nodeTools('direct').length + nodeTools('emulated').length} tool lookups in device modes direct, emulated: missing ndctl, xfs_io`,
    ]);
  });

  it('rejects an unknown mode with the allowed ones and checks nothing', () => {
    const r = run(['lvm', 'pmem'], () => true);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err[0]).toBe(
      'check-tools: unknown device mode "pmem"; allowed: lvm, direct, emulated, fake\nusage: pmem-csi-driver check-tools [lvm|direct|emulated|fake ...]',
    );
  });
});
