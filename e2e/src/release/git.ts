// What the release reads from git: is the work tree clean, the commit, the previous release tag
// and the commits since it (for the release notes).
import { REPO_ROOT } from '../cluster/components.js';
import { runTool } from '../cluster/processes.js';

const git = async (args: readonly string[], repo = REPO_ROOT): Promise<string> =>
  (await runTool('git', ['-C', repo, ...args], { timeoutMs: 30_000 })).stdout;

/** Paths with uncommitted changes or untracked files (git status --porcelain), empty when clean. */
export async function dirtyPaths(repo = REPO_ROOT): Promise<string[]> {
  const out = await git(['status', '--porcelain=v1', '--untracked-files=normal'], repo);
  return out
    .split('\n')
    .filter((l) => l.length > 3)
    .map((l) => l.slice(3));
}

export async function headCommit(): Promise<{ sha: string; date: string }> {
  const [sha = '', date = ''] = (await git(['log', '-1', '--format=%H%n%cI'])).trim().split('\n');
  return { sha, date };
}

const SEMVER_TAG = /^v(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$/;

/** The newest tag vX.Y.Z reachable from HEAD that is not `version` itself, or undefined. */
export async function previousTag(version: string): Promise<string | undefined> {
  const out = await git(['tag', '--merged', 'HEAD', '--sort=-v:refname', '--list', 'v*']);
  return out
    .split('\n')
    .map((t) => t.trim())
    .find((t) => SEMVER_TAG.test(t) && t !== `v${version}`);
}

export interface Commit {
  readonly sha: string;
  readonly date: string;
  readonly subject: string;
}

/** Commits after `since` (a tag) up to HEAD, newest first; all commits when `since` is undefined. */
export async function commitsSince(since: string | undefined): Promise<Commit[]> {
  const range = since === undefined ? ['HEAD'] : [`${since}..HEAD`];
  const out = await git(['log', '--no-merges', '--format=%H%x09%cs%x09%s', ...range]);
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [sha = '', date = '', ...rest] = l.split('\t');
      return { sha, date, subject: rest.join('\t') };
    });
}

export async function tagExists(tag: string): Promise<boolean> {
  const out = await git(['tag', '--list', tag]);
  return out.trim() === tag;
}

/** An annotated tag at HEAD (the real release only). */
export async function createTag(tag: string, message: string): Promise<void> {
  await git(['tag', '--annotate', '--message', message, tag, 'HEAD']);
}
