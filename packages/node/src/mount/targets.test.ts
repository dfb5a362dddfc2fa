// The CO's paths as the node creates them (mount/targets.ts), on a real filesystem in a temp dir:
// a target below something that is not a directory is the CO's precondition to fix (the fuzz found
// NodePublishVolume answering INTERNAL for a block target below a staging file), never INTERNAL.
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FailedPreconditionError } from '@pmem-csi/csi';
import { ensureDirectory, ensureFile, removeTarget } from './targets.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pmem-targets-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ensureFile', () => {
  it('creates the parents and an empty file', async () => {
    const target = join(dir, 'a', 'b', 'block');
    await ensureFile(target, 'target_path');
    expect((await stat(target)).isFile()).toBe(true);
    expect((await stat(target)).size).toBe(0);
  });

  it('replaces an empty directory with a file', async () => {
    const target = join(dir, 'block');
    await mkdir(target);
    await ensureFile(target, 'target_path');
    expect((await stat(target)).isFile()).toBe(true);
  });

  it('refuses a non-empty directory, naming the field', async () => {
    const target = join(dir, 'block');
    await mkdir(target);
    await writeFile(join(target, 'data'), 'x');
    await expect(ensureFile(target, 'target_path')).rejects.toThrow(FailedPreconditionError);
    await expect(ensureFile(target, 'target_path')).rejects.toThrow(/^target_path .*block is a non-empty directory/);
  });

  it('refuses a target below a file (a raw block staging file) as a precondition, naming the field and the path', async () => {
    const staging = join(dir, 'stage');
    await writeFile(staging, '');
    const target = join(staging, 'a');
    const err = await ensureFile(target, 'target_path').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FailedPreconditionError);
    expect((err as Error).message).toBe(
      `target_path ${target}: cannot create the directory ${staging}, because it or one of its parents exists and is not a directory`,
    );
  });

  it('refuses a target two levels below a file (ENOTDIR)', async () => {
    const file = join(dir, 'file');
    await writeFile(file, '');
    await expect(ensureFile(join(file, 'x', 'y'), 'target_path')).rejects.toThrow(FailedPreconditionError);
  });
});

describe('ensureDirectory', () => {
  it('creates the directory and its parents, and is idempotent', async () => {
    const target = join(dir, 'a', 'b');
    await ensureDirectory(target, 'target_path');
    await ensureDirectory(target, 'target_path');
    expect((await stat(target)).isDirectory()).toBe(true);
  });

  it('refuses a path that is a file, or below one, as a precondition naming the field', async () => {
    const file = join(dir, 'file');
    await writeFile(file, '');
    await expect(ensureDirectory(file, 'staging_target_path')).rejects.toThrow(
      /^staging_target_path .*file: cannot create the directory/,
    );
    await expect(ensureDirectory(join(file, 'sub'), 'target_path')).rejects.toThrow(FailedPreconditionError);
  });
});

describe('removeTarget', () => {
  it('removes a file or an empty directory, accepts a missing path, refuses a non-empty directory', async () => {
    const file = join(dir, 'f');
    await writeFile(file, '');
    await removeTarget(file);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
    await removeTarget(join(dir, 'missing'));
    const full = join(dir, 'full');
    await mkdir(full);
    await writeFile(join(full, 'data'), 'x');
    await expect(removeTarget(full)).rejects.toThrow(FailedPreconditionError);
    expect((await stat(join(full, 'data'))).isFile()).toBe(true);
  });
});
