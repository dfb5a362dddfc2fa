// The leak-checking test environment end to end: a nested Jest runs a fixture file with the e2e
// configuration. Left behind, its process, loop device, mount and volume file fail that file (its
// test itself passed) with a report naming the file and each of them; removed in the file's own
// top-level afterAll, nothing is reported — the check runs after the file's clean-up. Needs root
// (a loop device and a tmpfs mount); what the leaky run leaves is removed here by pid and device.
import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runTool } from '../cluster/processes.js';

const REPO = resolve(import.meta.dirname, '../../..');
const FIXTURE = 'e2e/src/leaks/__fixtures__/leaky.fixture.ts';

interface JestJson {
  numPassedTests: number;
  numFailedTests: number;
  numRuntimeErrorTestSuites: number;
  testResults: Array<{ message: string; status: string }>;
}

async function runFixture(dir: string, clean: boolean): Promise<{ json: JestJson; stderr: string }> {
  const out = join(dir, 'result.json');
  const r = await runTool(
    process.execPath,
    [
      '--experimental-vm-modules',
      '--no-warnings=ExperimentalWarning',
      'node_modules/jest/bin/jest.js',
      '--config',
      'e2e/jest.config.js',
      '--testMatch',
      '<rootDir>/src/leaks/__fixtures__/*.fixture.ts',
      '--json',
      `--outputFile=${out}`,
      FIXTURE,
    ],
    {
      cwd: REPO,
      timeoutMs: 180_000,
      okCodes: [0, 1],
      env: { LEAK_FIXTURE_DIR: dir, LEAK_FIXTURE_CLEAN: clean ? '1' : '0' },
    },
  );
  return { json: JSON.parse(readFileSync(out, 'utf8')) as JestJson, stderr: r.stderr };
}

/** Remove what the leaky run left, by the ids it recorded. */
async function removeLeft(dir: string): Promise<void> {
  const read = (f: string): string => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8').trim() : '');
  const pid = Number(read('pid'));
  if (pid > 0) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  await runTool('umount', [join(dir, 'mnt')], { okCodes: [0, 32] });
  if (read('loop') !== '') await runTool('losetup', ['--detach', read('loop')], { okCodes: [0, 1] });
}

describe('the leak-checking e2e environment', () => {
  const dirs: string[] = [];
  const fresh = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'pmem-csi-leak-fixture-'));
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    for (const d of dirs) {
      await removeLeft(d);
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('fails a file that leaves a process, a loop device, a mount and a volume file, naming each', async () => {
    if (process.getuid?.() !== 0) throw new Error('this test needs root (a loop device and a mount); CI runs as root');
    const dir = fresh();
    const { json, stderr } = await runFixture(dir, false);
    const pid = readFileSync(join(dir, 'pid'), 'utf8').trim();
    const loop = readFileSync(join(dir, 'loop'), 'utf8').trim();
    expect({ passed: json.numPassedTests, failedTests: json.numFailedTests }).toEqual({ passed: 1, failedTests: 0 });
    expect(json.numRuntimeErrorTestSuites).toBe(1);
    const message = json.testResults[0]?.message ?? '';
    for (const text of [
      `leak check: ${FIXTURE} left 4 thing(s) behind that it created`,
      `loop device: ${loop} -> ${join(dir, 'volume.img')}`,
      `mount: ${join(dir, 'mnt')} (tmpfs from tmpfs)`,
      `process: pid ${pid} (parent `,
      'sleep 120',
      `volume file: ${join(dir, 'volume.img')}`,
    ]) {
      expect(message).toContain(text);
      expect(stderr).toContain(text);
    }
  }, 240_000);

  it('passes a file that removes them in its own afterAll (the check runs after it)', async () => {
    if (process.getuid?.() !== 0) throw new Error('this test needs root (a loop device and a mount); CI runs as root');
    const dir = fresh();
    const { json, stderr } = await runFixture(dir, true);
    expect({
      passed: json.numPassedTests,
      failed: json.numFailedTests,
      errors: json.numRuntimeErrorTestSuites,
    }).toEqual({ passed: 1, failed: 0, errors: 0 });
    expect(stderr).toMatch(new RegExp(`leak check: ${FIXTURE.replaceAll('.', '\\.')} left nothing \\(`));
  }, 240_000);
});
