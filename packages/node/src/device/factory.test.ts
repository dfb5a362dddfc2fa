// createDeviceManager picks the implementation by mode and wires its dependencies.
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nullLogger } from '@pmem-csi/runtime';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import type { VolumeDeviceMode } from '@pmem-csi/api';
import { DirectDeviceManager } from './direct.js';
import { EmulatedDeviceManager } from './emulated.js';
import { losetupTable } from './emulated-losetup.js';
import { createDeviceManager } from './factory.js';
import { FakeDeviceManager } from './fake.js';
import { LvmDeviceManager } from './lvm.js';
import { MiB } from '@pmem-csi/csi';

/** The runner's loop devices are what its scripted losetup lists, not the host's sysfs. */
function withScriptedLoops(runner: ScriptedRunner): ScriptedRunner {
  return Object.assign(runner, { loopTable: losetupTable(runner) });
}

const runner = new ScriptedRunner([], undefined); // every tool "installed"
const deps = { runner, log: nullLogger, stateDir: '/var/lib/pmem-csi.intel.com', pmemPercentage: 100 };
const dirs: string[] = [];

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('createDeviceManager', () => {
  it.each([
    ['lvm', LvmDeviceManager],
    ['direct', DirectDeviceManager],
    ['fake', FakeDeviceManager],
  ] as const)('%s mode → %p', async (mode, cls) => {
    const dm = await createDeviceManager(mode, deps);
    expect(dm).toBeInstanceOf(cls);
    expect(dm.mode).toBe(mode);
  });

  it('fake mode uses fakeSize as its pool', async () => {
    const dm = await createDeviceManager('fake', { ...deps, fakeSize: 64 * MiB });
    await dm.setup();
    expect((await dm.getCapacity()).total).toBe(64 * MiB);
  });

  it('emulated mode keeps its files under <stateDir>/emulated and uses emulatedSize', async () => {
    if (process.getuid?.() !== 0) throw new Error('this case needs root (emulated mode refuses to start without it)');
    const stateDir = await mkdtemp(join(tmpdir(), 'pmem-csi-factory-'));
    dirs.push(stateDir);
    const dm = await createDeviceManager('emulated', {
      ...deps,
      runner: withScriptedLoops(
        new ScriptedRunner([{ command: 'losetup', args: ['--json'], stdout: '{"loopdevices":[]}' }], ['losetup', 'dd']),
      ),
      stateDir,
      emulatedSize: 128 * MiB,
    });
    expect(dm).toBeInstanceOf(EmulatedDeviceManager);
    await dm.setup();
    expect((await dm.getCapacity()).total).toBe(128 * MiB);
    expect(await readdir(stateDir)).toEqual(['emulated']);
  });

  it('rejects an unknown mode naming the allowed ones', async () => {
    await expect(createDeviceManager('tape' as VolumeDeviceMode, deps)).rejects.toMatchObject({
      kind: 'InvalidArgument',
      message: 'device mode "tape" is not one of lvm, direct, emulated, fake',
    });
  });
});
