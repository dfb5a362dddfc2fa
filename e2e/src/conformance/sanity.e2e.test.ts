// Conformance tier: the upstream csi-sanity suite against our controller + node, on fake devices
// and on emulated devices with real mkfs and mounts (root with loop devices; CI runs as root).
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSanity } from './sanity.js';
import { FAKE_ONLY_SKIPS, emulatedSkips } from './skips.js';

const base = join(tmpdir(), 'pmem-csi-e2e-sanity');

/** CAP_SYS_RESOURCE (bit 24) in this process's effective capabilities. */
function hasSysResource(): boolean {
  const eff = /CapEff:\s*([0-9a-f]+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0';
  return (BigInt(`0x${eff}`) & (1n << 24n)) !== 0n;
}

function report(label: string, r: Awaited<ReturnType<typeof runSanity>>): void {
  const failed = r.summary.cases.filter((c) => c.status === 'failed');
  process.stdout.write(`\ncsi-sanity (${label}): ${r.summary.passed} passed, ${r.summary.failed} failed, ${r.summary.skipped} skipped\n`);
  for (const f of failed) process.stdout.write(`  FAILED ${f.name}: ${f.message ?? ''}\n`);
}

describe('csi-sanity', () => {
  it('passes on fake devices', async () => {
    const r = await runSanity(join(base, 'fake'), 'fake', FAKE_ONLY_SKIPS);
    report('fake', r);
    expect(r.summary.cases.filter((c) => c.status === 'failed').map((c) => c.name)).toEqual([]);
    expect(r.summary.passed).toBeGreaterThanOrEqual(35);
    expect(r.exitCode).toBe(0);
  }, 20 * 60_000);

  it('passes on emulated devices with real filesystems (needs root and loop devices)', async () => {
    if (process.getuid?.() !== 0) throw new Error('the emulated conformance tier needs root (loop devices, mkfs, mount); CI runs as root');
    const r = await runSanity(join(base, 'emulated'), 'emulated', emulatedSkips(hasSysResource()));
    report('emulated', r);
    expect(r.summary.cases.filter((c) => c.status === 'failed').map((c) => c.name)).toEqual([]);
    expect(r.summary.passed).toBeGreaterThanOrEqual(40);
    expect(r.exitCode).toBe(0);
  }, 20 * 60_000);
});
