// The V8 options of the driver's process per mode (@pmem-csi/csi DRIVER_V8_OPTIONS) reach it
// wherever it starts for real: the pods carry them in NODE_OPTIONS (the operator's builders,
// packages/operator/src/objects/driver-env.test.ts) and the local stack on the command line of
// every driver process. Here: the pinned Node.js takes each mode's value in NODE_OPTIONS (anything
// else there stops node before the driver runs, a crash loop of every pod) and applies the limits;
// the local stack starts each driver with its mode's options.
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DRIVER_MODES, DRIVER_V8_OPTIONS, driverNodeOptions, MiB } from '@pmem-csi/csi';
import { driverCommand, startDriverProcess } from './local/processes.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** V8's heap size limit of a node started with NODE_OPTIONS=`options`, in MiB. */
function heapLimitMiB(options: string): { status: number | null; limit: number; err: string } {
  const script = 'process.stdout.write(String(require("node:v8").getHeapStatistics().heap_size_limit))';
  const r = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: options },
    timeout: 30_000,
  });
  return { status: r.status, limit: Number(r.stdout.trim()) / MiB, err: r.stderr };
}

describe('the V8 options of the driver process', () => {
  it('node mode: a young generation of a few MiB and an old space of 64 MiB; controller: a young generation of a few MiB', () => {
    expect(DRIVER_V8_OPTIONS).toEqual({
      node: ['--max-semi-space-size=2', '--max-old-space-size=64'],
      controller: ['--max-semi-space-size=4'],
    });
    expect(driverNodeOptions('node')).toBe('--max-semi-space-size=2 --max-old-space-size=64');
    expect(driverNodeOptions('controller')).toBe('--max-semi-space-size=4');
  });

  it.each(DRIVER_MODES)('%s mode: the pinned Node.js accepts them in NODE_OPTIONS and applies them', (mode) => {
    const withOptions = heapLimitMiB(driverNodeOptions(mode));
    expect(withOptions.err).toBe('');
    expect(withOptions.status).toBe(0);
    const defaults = heapLimitMiB('');
    if (mode === 'node') {
      // 64 MiB of old space plus the young generation (two 2 MiB semi-spaces and their large-object space).
      expect(withOptions.limit).toBeGreaterThanOrEqual(64);
      expect(withOptions.limit).toBeLessThanOrEqual(72);
      expect(defaults.limit).toBeGreaterThan(256);
    } else {
      // The old generation keeps V8's machine-sized default (no limit of ours); the young generation
      // shrinks from V8's default semi-spaces (64 MiB each on a large machine) to 4 MiB, which
      // lowers the heap limit by three times the difference (V8 counts the young generation so).
      expect(withOptions.limit).toBeLessThan(defaults.limit);
      expect(withOptions.limit).toBeGreaterThan(512);
      expect(defaults.limit - withOptions.limit).toBeLessThanOrEqual(3 * 64);
    }
  });

  it('the local stack starts each driver with its mode options before the binary, and the driver runs with them', async () => {
    for (const mode of DRIVER_MODES) {
      const command = driverCommand(mode);
      expect(command.slice(0, DRIVER_V8_OPTIONS[mode].length)).toEqual([...DRIVER_V8_OPTIONS[mode]]);
      expect(command.at(-1)).toMatch(/[/\\]main\.[jt]s$/);
    }
    const dir = mkdtempSync(join(tmpdir(), 'pmem-driver-runtime-'));
    dirs.push(dir);
    const log = join(dir, 'node.log');
    // The mode and a node id only: the driver reads both from the rendered flags and refuses to start without the rest.
    const p = startDriverProcess('node-a', { mode: 'node', nodeId: 'node-a' }, log);
    const exited = new Promise<number | null>((resolve) => p.child.once('exit', (code) => resolve(code)));
    expect(p.child.spawnargs).toEqual([process.execPath, ...driverCommand('node'), '--mode=node', '--nodeid=node-a']);
    expect(p.mode).toBe('node');
    expect(p.flags).toEqual({ mode: 'node', nodeId: 'node-a' });
    expect(await exited).toBe(2);
    const out = readFileSync(log, 'utf8');
    expect(out).toContain('--endpoint is required');
    expect(out).not.toContain('--mode');
    expect(out).not.toContain('--nodeid');
  }, 60_000);
});
