// R8 soak (issue 14), manual mode only: `npm run soak` (PMEM_CSI_SOAK_MINUTES, default 30). Runs the
// crash campaign's volume life cycles (create, stage, publish, unpublish, unstage, delete) without
// crashes through the local stack on emulated PMEM for the given time, samples every 30 s the RSS of
// each driver process (/proc/<pid>/status) and the controller's process_resident_memory_bytes and
// nodejs_heap_size_used_bytes (its /metrics on the status port; the local stack gives the nodes no
// metrics port), and reports each series' drift in MiB per hour from a least-squares line, plus the
// leak check of the crash campaign (volumes, loop devices, image files, mounts, capacity) before vs
// after. Exit code 1 on a finding or a leak. Not a jest file: `npm run e2e` does not pick it up.
import { rm, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControllerCsi, startLocalStack, type LocalStack } from '@pmem-csi/driver';
import { createLogger } from '@pmem-csi/runtime';
import { MiB } from '@pmem-csi/csi';
import { CrashCampaign, inventory } from './crash-campaign.js';

const SAMPLE_MS = 30_000;

function minutes(): number {
  const raw = process.env['PMEM_CSI_SOAK_MINUTES'] ?? '30';
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 7 * 24 * 60)
    throw new Error(
      `PMEM_CSI_SOAK_MINUTES must be a number of minutes above 0 and at most 10080 (a week), got ${JSON.stringify(raw)}`,
    );
  return n;
}

interface Sample {
  readonly atMs: number;
  /** Series name → MiB. */
  readonly values: Readonly<Record<string, number>>;
}

async function rssMiB(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const kb = status === undefined ? undefined : /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) / 1024;
}

async function controllerMetrics(statusUrl: string): Promise<Record<string, number>> {
  const res = await fetch(`${statusUrl}/metrics`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
  if (res === undefined || !res.ok) return {};
  const text = await res.text();
  const out: Record<string, number> = {};
  for (const name of ['process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(text);
    if (m?.[1] !== undefined) out[`controller ${name} (MiB)`] = Number(m[1]) / MiB;
  }
  return out;
}

async function sample(stack: LocalStack, started: number): Promise<Sample> {
  const values: Record<string, number> = {};
  for (const p of stack.processes) {
    const rss = await rssMiB(p.child.pid);
    if (rss !== undefined) values[`${p.name} RSS (MiB)`] = rss;
  }
  Object.assign(values, await controllerMetrics(stack.statusUrl));
  return { atMs: Date.now() - started, values };
}

/** Least-squares slope in MiB per hour; undefined with fewer than 3 points. */
export function driftPerHour(points: ReadonlyArray<readonly [number, number]>): number | undefined {
  if (points.length < 3) return undefined;
  const xs = points.map(([ms]) => ms / 3_600_000);
  const ys = points.map(([, y]) => y);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * ((ys[i] ?? 0) - my);
    den += (x - mx) ** 2;
  });
  return den === 0 ? undefined : num / den;
}

async function main(): Promise<number> {
  const durationMin = minutes();
  if (process.getuid?.() !== 0) throw new Error('the soak test needs root (emulated PMEM on loop devices)');
  const dir = join(tmpdir(), 'pmem-csi-soak');
  const mountDir = join(tmpdir(), 'pmem-csi-soak-mounts');
  await rm(dir, { recursive: true, force: true });
  await rm(mountDir, { recursive: true, force: true });
  const log = (line: string): void => void process.stdout.write(`${line}\n`);
  log(
    `soak: ${durationMin} min of volume life cycles on emulated PMEM (local stack in ${dir}), samples every ${SAMPLE_MS / 1000} s`,
  );
  const stack = await startLocalStack(dir, 'emulated', createLogger({ level: 'warn' }), [
    ['s1', 512 * MiB],
    ['s2', 512 * MiB],
  ]);
  const ctl = new ControllerCsi(stack.controllerSocket);
  const stop = (): void => {
    log('soak: interrupted, stopping the stack');
    void stack.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await stack.ready(120_000);
    const before = await inventory(stack, ctl, mountDir);
    const started = Date.now();
    const samples: Sample[] = [await sample(stack, started)];
    const timer = setInterval(() => {
      void sample(stack, started).then((s) => {
        samples.push(s);
        log(
          `  t=${(s.atMs / 60_000).toFixed(1)} min ${Object.entries(s.values)
            .map(([k, v]) => `${k} ${v.toFixed(1)}`)
            .join(', ')}`,
        );
      });
    }, SAMPLE_MS);
    const seed = Date.now() % 1_000_000;
    const campaign = new CrashCampaign(stack, ctl, {
      cycles: Number.MAX_SAFE_INTEGER,
      lanes: 2,
      crashEvery: 1,
      seed,
      mountDir,
      opTimeoutMs: 120_000,
      log,
      durationMs: durationMin * 60_000,
      crashes: false,
    });
    let result;
    try {
      result = await campaign.run();
    } finally {
      clearInterval(timer);
      campaign.close();
    }
    samples.push(await sample(stack, started));
    const after = await inventory(stack, ctl, mountDir);
    const series = [...new Set(samples.flatMap((s) => Object.keys(s.values)))];
    const lines = series.map((name) => {
      const pts = samples.flatMap((s) => (s.values[name] === undefined ? [] : [[s.atMs, s.values[name]] as const]));
      const drift = driftPerHour(pts);
      const first = pts[0]?.[1] ?? 0;
      const last = pts.at(-1)?.[1] ?? 0;
      return `  ${name}: ${first.toFixed(1)} -> ${last.toFixed(1)}, drift ${drift === undefined ? 'n/a (too few samples)' : `${drift >= 0 ? '+' : ''}${drift.toFixed(1)} MiB/h`} (${pts.length} samples)`;
    });
    const leaked = JSON.stringify(after) !== JSON.stringify(before);
    log(
      `soak: ${result.cycles} life cycles in ${(result.durationMs / 60_000).toFixed(1)} min (${((result.cycles * 3_600_000) / result.durationMs).toFixed(0)} per hour), ${result.retriedOps} retried operations, ${result.findings.length} findings`,
    );
    for (const f of result.findings) log(`  finding: ${f}`);
    log(`soak: memory (${samples.length} samples)\n${lines.join('\n')}`);
    log(
      `soak: leak check — volumes ${before.volumes.length} -> ${after.volumes.length}, loop devices ${before.loopDevices.length} -> ${after.loopDevices.length}, image files ${before.imageFiles.length} -> ${after.imageFiles.length}, mounts ${before.mounts.length} -> ${after.mounts.length}, capacity ${JSON.stringify(before.capacity)} -> ${JSON.stringify(after.capacity)}${leaked ? ' LEAK' : ''}`,
    );
    await writeFile(
      join(tmpdir(), 'pmem-csi-soak-report.json'),
      `${JSON.stringify({ durationMin, result: { ...result, crashes: undefined }, samples, before, after }, null, 2)}\n`,
    );
    log(`soak: samples and result in ${join(tmpdir(), 'pmem-csi-soak-report.json')}`);
    return result.findings.length > 0 || leaked ? 1 : 0;
  } finally {
    ctl.close();
    await stack.stop();
    await rm(mountDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`soak: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
