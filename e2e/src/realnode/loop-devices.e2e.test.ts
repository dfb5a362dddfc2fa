// The real node's clean-up finds a loop device that a driver container attached, after that
// container is gone: the kernel then reports the backing file under the container's own path
// ("/emulated/<id>.img", seen after killed k8s-storage runs), so a path match misses it and the
// clean-up used to remove the state directory under the attached device (two devices on deleted
// files were left on this machine). Reproduced here with a bind mount detached lazily, as a
// container's mount namespace goes away. Needs root (mount, losetup), like the real-node tier.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool } from '../cluster/processes.js';
import { leftovers, loopDevicesUnder } from './real-node.js';

describe('loop devices below a state directory', () => {
  let base = '';
  let loop: string | undefined;

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error('this test attaches loop devices and bind-mounts: needs root (CI runs as root)');
    base = await mkdtemp(join(tmpdir(), 'pmem-rn-loops-'));
    await mkdir(join(base, 'state/emulated'), { recursive: true });
    await mkdir(join(base, 'container'));
    await writeFile(join(base, 'state/emulated/v.img'), Buffer.alloc(0));
    await runTool('truncate', ['-s', '16M', join(base, 'state/emulated/v.img')]);
  });

  afterAll(async () => {
    if (loop !== undefined) await runTool('losetup', ['--detach', loop]).catch(() => undefined);
    await runTool('umount', ['--lazy', join(base, 'container')], { okCodes: [0, 32] }).catch(() => undefined);
    if (base !== '') await rm(base, { recursive: true, force: true });
  });

  it('by path while attached through the directory, by identity once the container path is gone', async () => {
    const state = join(base, 'state');
    // The "container" sees the state directory at another path and attaches the file from there.
    await runTool('mount', ['--bind', state, join(base, 'container')]);
    loop = (await runTool('losetup', ['--find', '--show', join(base, 'container/emulated/v.img')])).stdout.trim();
    expect((await loopDevicesUnder(join(base, 'container'))).map((l) => l.name)).toEqual([loop]);
    await runTool('umount', ['--lazy', join(base, 'container')]);
    const found = await loopDevicesUnder(state);
    // The kernel names the file relative to the vanished mount now: no path under `state`.
    expect(found.map((l) => [l.name, l.backFile, l.deleted])).toEqual([[loop, '/emulated/v.img', false]]);
    // (Only its loop-device lines: a real node running meanwhile has its bridge and rules up.)
    expect((await leftovers([state])).filter((l) => l.startsWith('loop device'))).toEqual([
      `loop device ${loop} -> /emulated/v.img`,
    ]);
    await runTool('losetup', ['--detach', loop]);
    loop = undefined;
    expect(await loopDevicesUnder(state)).toEqual([]);
  });
});
