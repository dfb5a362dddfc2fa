// The main job end to end: `pmem-csi-driver local` as a user runs it (npm start), as a child process.
// As root (CI) it runs on emulated PMEM with real mkfs and mounts; the fake-device variant runs too.
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../../../..');

function runLocal(args: string[], dir: string): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@pmem-csi/source', '--import', 'tsx', 'packages/driver/src/main.ts', 'local', ...args],
      { cwd: root, env: { ...process.env, PMEM_CSI_LOCAL_DIR: dir }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => done({ code, out }));
  });
}

describe('npm start (pmem-csi-driver local)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmem-local-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs the walkthrough on fake devices', async () => {
    const { code, out } = await runLocal(['--fake'], join(dir, 'fake'));
    expect(out).toContain('device mode: fake (--fake given)');
    expect(out).toMatch(/demo-preferred \(256 MiB, prefers node-b\) -> node-b/);
    expect(out).toMatch(/demo-large +\(900 MiB, no topology\) +-> node-a/);
    expect(out).toContain('demo-preferred again                     -> same id: yes');
    expect(out).toContain(
      'RESOURCE_EXHAUSTED: no node can hold 4 GiB; the largest volume available is 512 MiB (node "node-c")',
    );
    expect(out).toContain('volumes left: 0');
    expect(out).toContain('stopped; mounts, loop devices, sockets and the lock of the state directory released.');
    // Without --keep the sockets are gone at the end: no hint to use them, one line pointing to --keep.
    expect(out).not.toContain('CSI sockets');
    expect(out).not.toContain('npm run status');
    expect(out.trimEnd().split('\n').at(-1)).toBe(
      `the stack is torn down now (its logs stay in ${join(dir, 'fake')}/logs/); run \`npm start -- --keep --fake\` to keep it up and get the sockets`,
    );
    expect(existsSync(join(dir, 'fake', 'stack.lock'))).toBe(false);
    expect(code).toBe(0);
  }, 180_000);

  it('runs the walkthrough on emulated PMEM with a real mount (needs root and loop devices)', async () => {
    if (process.getuid?.() !== 0)
      throw new Error('this test needs root (emulated PMEM uses loop devices); CI runs as root');
    const { code, out } = await runLocal([], join(dir, 'emulated'));
    expect(out).toContain('device mode: emulated (root with loop devices)');
    expect(out).toContain('wrote and read back: hello from pmem-csi');
    expect(out).toContain('volumes left: 0');
    expect(code).toBe(0);
    const loops = execFileSync('losetup', ['-l', '-n', '-O', 'BACK-FILE'], { encoding: 'utf8' });
    expect(loops).not.toContain(join(dir, 'emulated'));
  }, 240_000);
});
