// Conformance tier: the upstream csi-sanity suite against our controller + node, on fake devices
// and on emulated devices with real mkfs and mounts (root with loop devices; CI runs as root).
// csi-sanity's endpoint is the plugin shim, so its whole-lifecycle specs (LIFECYCLE_SPECS) run: on
// emulated devices they must pass; on fake devices they are on our skip list (nothing to mount).
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outcomesOf } from './junit.js';
import { runSanity, type SanityRun } from './sanity.js';
import { FAKE_ONLY_SKIPS, KATA_SKIPS, LIFECYCLE_SPECS, NO_CONTROLLER_SKIP, emulatedSkips } from './skips.js';

const base = join(tmpdir(), 'pmem-csi-e2e-sanity');

/** CAP_SYS_RESOURCE (bit 24) in this process's effective capabilities. */
function hasSysResource(): boolean {
  const eff = /CapEff:\s*([0-9a-f]+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0';
  return (BigInt(`0x${eff}`) & (1n << 24n)) !== 0n;
}

function report(label: string, r: SanityRun): void {
  const failed = r.summary.cases.filter((c) => c.status === 'failed');
  const shim = [...r.shimCalls].map(([m, n]) => `${m} ${n}`).join(', ');
  process.stdout.write(
    `\ncsi-sanity (${label}) ran in ${(r.sanityMs / 1000).toFixed(1)} s through the plugin shim (calls: ${shim})\n`,
  );
  for (const o of outcomesOf(r.summary, LIFECYCLE_SPECS)) {
    const why =
      o.status === 'passed'
        ? 'now passes'
        : o.status === 'skipped'
          ? `skipped by our list (${o.message ?? ''})`
          : `${o.status}${o.message === undefined ? '' : `: ${o.message}`}`;
    process.stdout.write(`  lifecycle spec, formerly skipped as "${NO_CONTROLLER_SKIP}": ${o.spec}: ${why}\n`);
  }
  process.stdout.write(
    `csi-sanity (${label}): ${r.summary.passed} passed, ${r.summary.failed} failed, ${r.summary.skipped} skipped\n`,
  );
  for (const f of failed) process.stdout.write(`  FAILED ${f.name}: ${f.message ?? ''}\n`);
}

/** Specs csi-sanity skipped because the endpoint's Identity lacked CONTROLLER_SERVICE: none, with the shim. */
function skippedForNoController(r: SanityRun): string[] {
  return r.summary.cases
    .filter((c) => c.status === 'skipped' && (c.message ?? '').includes(NO_CONTROLLER_SKIP))
    .map((c) => c.name);
}

describe('csi-sanity', () => {
  it(
    'passes on fake devices',
    async () => {
      const r = await runSanity(join(base, 'fake'), 'fake', FAKE_ONLY_SKIPS);
      report('fake', r);
      expect(r.summary.cases.filter((c) => c.status === 'failed').map((c) => c.name)).toEqual([]);
      expect(r.summary.passed).toBeGreaterThanOrEqual(35);
      expect(r.exitCode).toBe(0);
      // The shim answered csi-sanity's Identity and forwarded its Node calls.
      expect(r.shimCalls.get('GetPluginCapabilities')).toBeGreaterThan(0);
      expect(r.shimCalls.get('NodeGetInfo')).toBeGreaterThan(0);
      expect(skippedForNoController(r)).toEqual([]);
      // On fake devices the lifecycle specs are skipped by our list, not by csi-sanity.
      expect(outcomesOf(r.summary, LIFECYCLE_SPECS).map((o) => [o.spec, o.status, o.message])).toEqual(
        LIFECYCLE_SPECS.map((s) => [s, 'skipped', 'skipped']),
      );
    },
    20 * 60_000,
  );

  it(
    'passes on emulated devices with real filesystems (needs root and loop devices)',
    async () => {
      if (process.getuid?.() !== 0)
        throw new Error('the emulated conformance tier needs root (loop devices, mkfs, mount); CI runs as root');
      const r = await runSanity(join(base, 'emulated'), 'emulated', emulatedSkips(hasSysResource()));
      report('emulated', r);
      expect(r.summary.cases.filter((c) => c.status === 'failed').map((c) => c.name)).toEqual([]);
      expect(r.summary.passed).toBeGreaterThanOrEqual(44);
      expect(r.exitCode).toBe(0);
      expect(skippedForNoController(r)).toEqual([]);
      expect(outcomesOf(r.summary, LIFECYCLE_SPECS).map((o) => [o.spec, o.status])).toEqual(
        LIFECYCLE_SPECS.map((s) => [s, 'passed']),
      );
      // The lifecycle went through the shim to the real node: staged, published, stats, and back.
      const lifecycle = [
        'NodeStageVolume',
        'NodePublishVolume',
        'NodeGetVolumeStats',
        'NodeUnpublishVolume',
        'NodeUnstageVolume',
      ];
      expect(lifecycle.filter((m) => (r.shimCalls.get(m) ?? 0) === 0)).toEqual([]);
    },
    20 * 60_000,
  );

  it(
    'passes on emulated devices for Kata Containers volumes (kataContainers: "true" on every volume; needs root and loop devices)',
    async () => {
      if (process.getuid?.() !== 0)
        throw new Error('the emulated conformance tier needs root (loop devices, mkfs, mount); CI runs as root');
      const r = await runSanity(join(base, 'kata'), 'emulated', [...emulatedSkips(hasSysResource()), ...KATA_SKIPS], {
        kataContainers: 'true',
      });
      report('emulated, kataContainers', r);
      expect(r.summary.cases.filter((c) => c.status === 'failed').map((c) => c.name)).toEqual([]);
      expect(r.summary.passed).toBeGreaterThanOrEqual(40);
      expect(r.exitCode).toBe(0);
      expect(outcomesOf(r.summary, LIFECYCLE_SPECS).map((o) => [o.spec, o.status])).toEqual(
        LIFECYCLE_SPECS.map((s) => [s, 'passed']),
      );
      // Staged and published as Kata volumes: each stage of a new volume made an image file, as the node logged.
      expect(['NodeStageVolume', 'NodePublishVolume'].filter((m) => (r.shimCalls.get(m) ?? 0) === 0)).toEqual([]);
      const images = readFileSync(r.nodeLog, 'utf8').split('Kata Containers image file created').length - 1;
      process.stdout.write(
        `csi-sanity (emulated, kataContainers): ${images} Kata image files made by NodeStageVolume\n`,
      );
      expect(images).toBeGreaterThanOrEqual(LIFECYCLE_SPECS.length);
    },
    20 * 60_000,
  );
});
