// What the release refuses before it builds anything (a throw-away git repository stands in for
// the checkout, so the test does not depend on the state of the real one).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool } from '../cluster/processes.js';
import { dirtyPaths } from './git.js';
import { preflight, ReleaseRefusedError, sourceVersion } from './release.js';
import { parseReleaseArgs } from './options.js';

describe('release preflight', () => {
  let repo: string;
  const git = (...args: string[]): Promise<unknown> =>
    runTool('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args]);

  beforeAll(async () => {
    repo = mkdtempSync(join(tmpdir(), 'release-preflight-'));
    await git('init', '-q');
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    await git('add', 'a.txt');
    await git('commit', '-q', '-m', 'first');
  });
  afterAll(() => rmSync(repo, { recursive: true, force: true }));

  it('a clean tree has no dirty paths; an edit and a new file are named', async () => {
    expect(await dirtyPaths(repo)).toEqual([]);
    writeFileSync(join(repo, 'a.txt'), 'changed\n');
    mkdirSync(join(repo, 'sub'));
    writeFileSync(join(repo, 'sub', 'new.txt'), 'new\n');
    expect(await dirtyPaths(repo)).toEqual(['a.txt', 'sub/']);
  });

  it('refuses a dirty tree naming the files, unless --allow-dirty', async () => {
    const out = join(repo, 'out-none');
    const opts = parseReleaseArgs(['--version', sourceVersion(), '--dry-run', '--out', out], repo);
    await expect(preflight(opts, repo)).rejects.toThrow(ReleaseRefusedError);
    await expect(preflight(opts, repo)).rejects.toThrow(
      /the work tree has uncommitted changes \(2\): a\.txt, sub\/; commit or remove them/,
    );
    const allowed = await preflight({ ...opts, allowDirty: true }, repo);
    expect(allowed.dirty).toEqual(['a.txt', 'sub/']);
  });

  it('refuses an output directory that is not empty', async () => {
    const out = join(repo, 'sub');
    const opts = parseReleaseArgs(['--version', sourceVersion(), '--dry-run', '--out', out, '--allow-dirty'], repo);
    await expect(preflight(opts, repo)).rejects.toThrow(`--out ${out}: exists and is not empty`);
  });

  it('a real release must have the version of the sources', async () => {
    const opts = parseReleaseArgs(
      ['--version', '99.0.0', '--registry', 'r.example', '--cosign-key', 'k', '--allow-dirty'],
      repo,
    );
    await expect(preflight(opts, repo)).rejects.toThrow(`--version 99.0.0: the sources say ${sourceVersion()}`);
  });
});
