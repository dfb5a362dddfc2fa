import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunOptions, RunResult } from '@pmem-csi/runtime';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import { MiB, FailedPreconditionError } from '@pmem-csi/csi';
import { DeviceInUseError } from './device-manager.js';
import {
  HEAD_ERASE_BYTES,
  eraseTimeoutMs,
  hostBlockDevices,
  isUnused,
  zeroDevice,
  type BlockDeviceAccess,
} from './wipe.js';

/** A ScriptedRunner that also keeps the options of every call. */
class OptionsRunner extends ScriptedRunner {
  readonly options: RunOptions[] = [];

  override run(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    this.options.push(options);
    return super.run(command, args, options);
  }
}

describe('zeroDevice', () => {
  it('head only (default): one 4 KiB block, direct and flushed, with a one-minute budget', async () => {
    const runner = new OptionsRunner([
      {
        command: 'dd',
        args: ['if=/dev/zero', 'of=/dev/pmem0', 'bs=4096', 'count=1', 'oflag=direct', 'conv=fsync'],
        exact: true,
      },
    ]);
    await zeroDevice(runner, { path: '/dev/pmem0' });
    expect(runner.unused()).toEqual([]);
    expect(runner.options[0]?.timeoutMs).toBe(eraseTimeoutMs(HEAD_ERASE_BYTES));
    expect(eraseTimeoutMs(HEAD_ERASE_BYTES)).toBe(61_000);
  });

  it('the whole device: exact byte count in 1 MiB blocks (never past the end), budget grows with the size', async () => {
    const bytes = 64 * MiB + 4096; // not a multiple of the block size
    const runner = new OptionsRunner([
      {
        command: 'dd',
        args: [
          'if=/dev/zero',
          'of=/dev/vg/lv',
          'bs=1M',
          `count=${bytes}`,
          'iflag=count_bytes',
          'oflag=direct',
          'conv=fsync',
        ],
        exact: true,
      },
    ]);
    const signal = new AbortController().signal;
    await zeroDevice(runner, { path: '/dev/vg/lv', bytes }, signal);
    expect(runner.unused()).toEqual([]);
    expect(runner.options[0]).toMatchObject({ signal, timeoutMs: 60_000 + 7_000 });
  });

  it('a failing dd fails the erase with its message', async () => {
    const runner = new ScriptedRunner([
      { command: 'dd', exitCode: 1, stderr: 'dd: error writing: No space left on device' },
    ]);
    await expect(zeroDevice(runner, { path: '/dev/pmem0', bytes: 8 * MiB })).rejects.toThrow(/No space left on device/);
  });
});

describe('hostBlockDevices and isUnused', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pmem-wipe-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('opens an unused path exclusively and reports a missing device node', async () => {
    const file = join(dir, 'dev');
    writeFileSync(file, '');
    await expect(hostBlockDevices.assertNotInUse(file, 'vol-1')).resolves.toBeUndefined();
    await expect(hostBlockDevices.assertNotInUse(join(dir, 'missing'), 'vol-1')).rejects.toThrow(
      new FailedPreconditionError(
        `device node ${join(dir, 'missing')} of volume "vol-1" does not exist, cannot erase it`,
      ),
    );
    expect(await isUnused(hostBlockDevices, file)).toBe(true);
  });

  it('isUnused: DeviceInUseError → false; any other failure propagates', async () => {
    const busy: BlockDeviceAccess = { assertNotInUse: () => Promise.reject(new DeviceInUseError('busy')) };
    const broken: BlockDeviceAccess = { assertNotInUse: () => Promise.reject(new Error('EIO')) };
    expect(await isUnused(busy, '/dev/pmem0')).toBe(false);
    await expect(isUnused(broken, '/dev/pmem0')).rejects.toThrow('EIO');
  });
});
