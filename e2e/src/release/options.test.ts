// The release's command line and its release notes (no tools needed).
import { describe, expect, it } from '@jest/globals';
import { isLoopbackRegistry, parseReleaseArgs, ReleaseUsageError } from './options.js';
import { releaseNotes, shortSubject } from './notes.js';

const problemsOf = (argv: string[]): readonly string[] => {
  try {
    parseReleaseArgs(argv, '/repo');
  } catch (e) {
    if (e instanceof ReleaseUsageError) return e.problems;
    throw e;
  }
  return [];
};

describe('parseReleaseArgs', () => {
  it('takes a dry run without a registry, with defaults', () => {
    expect(parseReleaseArgs(['--version', '1.2.3', '--dry-run'], '/repo')).toEqual({
      version: '1.2.3',
      dryRun: true,
      registry: undefined,
      registryCa: undefined,
      out: '/repo/tmp/release/1.2.3',
      cosignKey: undefined,
      allowDirty: false,
    });
  });

  it('resolves paths against the working directory and takes --flag=value', () => {
    const o = parseReleaseArgs(
      [
        '--version=1.0.0-rc.1',
        '--dry-run',
        '--registry',
        '127.0.0.1:5000/pmem/',
        '--registry-ca',
        'ca.crt',
        '--out=/x',
        '--allow-dirty',
      ],
      '/repo',
    );
    expect(o).toMatchObject({
      version: '1.0.0-rc.1',
      registry: '127.0.0.1:5000/pmem',
      registryCa: '/repo/ca.crt',
      out: '/x',
      allowDirty: true,
    });
  });

  it('refuses every bad input naming the flag', () => {
    expect(problemsOf([])).toEqual([
      '--version: required (X.Y.Z)',
      '--registry: required without --dry-run',
      expect.stringMatching(/^--cosign-key: required/),
    ]);
    expect(problemsOf(['--version', '1.2', '--dry-run'])).toEqual([
      '--version: "1.2" is not a semantic version X.Y.Z[-pre.release] (no build metadata)',
    ]);
    expect(problemsOf(['--version', '1.2.3+build', '--dry-run'])[0]).toMatch(/^--version: "1.2.3\+build"/);
    expect(problemsOf(['--version', '1.2.3', '--dry-run', '--registry', 'registry.example.com/pmem'])).toEqual([
      '--registry: a dry run pushes only to a registry on the loopback interface, not to "registry.example.com/pmem"',
    ]);
    expect(problemsOf(['--version', '1.2.3', '--dry-run', '--registry', 'https://127.0.0.1:5000'])[0]).toMatch(
      /without a scheme/,
    );
    expect(problemsOf(['--version', '1.2.3', '--dry-run', '--registry', '127.0.0.1:5000/Pmem'])[0]).toMatch(
      /lower-case/,
    );
    expect(problemsOf(['--version', '1.2.3', '--dry-run', '--bogus'])[0]).toMatch(
      /^--bogus: unknown argument \(allowed: --version/,
    );
    expect(problemsOf(['--version', '1.2.3', '--dry-run', '--out'])).toEqual(['--out: needs a value']);
    expect(problemsOf(['--version', '1.2.3', '--dry-run=yes'])).toEqual(['--dry-run: takes no value']);
  });

  it('a real release needs a registry and the project key', () => {
    expect(problemsOf(['--version', '1.2.3', '--registry', 'registry.example.com/pmem'])).toEqual([
      expect.stringMatching(/^--cosign-key: required without --dry-run/),
    ]);
    expect(problemsOf(['--version', '1.2.3', '--registry', 'registry.example.com/pmem', '--cosign-key', 'k'])).toEqual(
      [],
    );
  });

  it('knows the loopback hosts', () => {
    expect(['127.0.0.1:5000', 'localhost:5000/x', '[::1]:5000', '127.1.2.3'].map(isLoopbackRegistry)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['10.0.0.1:5000', 'registry.example.com', 'localhost.example.com:5000'].map(isLoopbackRegistry)).toEqual([
      false,
      false,
      false,
    ]);
  });
});

describe('release notes', () => {
  it('cuts long subjects at the first sentence', () => {
    const long = `node: one reader of tools' JSON output for ndctl.ts and cxl-list.ts. ${'x'.repeat(300)}`;
    expect(shortSubject(long)).toBe("node: one reader of tools' JSON output for ndctl.ts and cxl-list.ts. …");
    expect(shortSubject('short')).toBe('short');
  });

  it('lists the artifacts and the commits since the previous tag', () => {
    const notes = releaseNotes({
      version: '1.2.3',
      previousTag: 'v1.2.2',
      commits: [{ sha: 'a'.repeat(40), date: '2026-12-07', subject: 'fix it' }],
      images: [{ name: 'driver', ref: 'r/pmem-csi-driver:1.2.3', digest: `sha256:${'b'.repeat(64)}` }],
      chart: { ref: 'oci://r/charts/pmem-csi', version: '1.2.3', digest: `sha256:${'c'.repeat(64)}` },
    });
    expect(notes).toContain('# PMEM-CSI 1.2.3');
    expect(notes).toContain(`- driver: \`r/pmem-csi-driver:1.2.3@sha256:${'b'.repeat(64)}\``);
    expect(notes).toContain('helm install pmem-csi oci://r/charts/pmem-csi --version 1.2.3');
    expect(notes).toContain('## Changes since v1.2.2 (1 commits)');
    expect(notes).toContain('- fix it (aaaaaaa, 2026-12-07)');
  });
});
