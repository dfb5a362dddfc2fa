// B5: certificate generation with the project's certificate code — a CA and the two leaves of a
// driver installation (what the operator and deploy/tools/make-certs.ts issue, default key size) —
// and the longest event-loop stall meanwhile (a server that issues certificates must stay
// responsive). Full runs also run packages/runtime/bench/keygen.bench.ts once (the comparison of
// key generation and signing methods) and keep its table in the JSON.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { NODE_CONTROLLER_IDENTITY, REGISTRY_IDENTITY, createCa, createLeaf } from '@pmem-csi/runtime';
import { runTool } from '../cluster/processes.js';
import { median, type FigureSpec } from './figures.js';
import type { ScenarioResult } from './scenario.js';
import type { BenchContext } from './setup.js';

async function issueSet(): Promise<void> {
  const ca = await createCa({ commonName: 'bench CA', validityDays: 2 });
  await Promise.all([
    createLeaf({ ca, dnsName: REGISTRY_IDENTITY, validityDays: 2 }),
    createLeaf({ ca, dnsName: NODE_CONTROLLER_IDENTITY, validityDays: 2 }),
  ]);
}

/** Wall ms of one certificate set and the longest event-loop delay seen meanwhile. */
async function measure(): Promise<{ ms: number; stallMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  await sleep(5);
  const t0 = performance.now();
  await issueSet();
  const ms = performance.now() - t0;
  await sleep(5);
  h.disable();
  return { ms, stallMs: h.max / 1e6 };
}

export async function runB5(ctx: BenchContext): Promise<ScenarioResult> {
  const runs: Array<{ ms: number; stallMs: number }> = [];
  for (let i = 0; i < (ctx.smoke ? 2 : 5); i++) runs.push(await measure());
  let keygenBench: string | undefined;
  if (!ctx.smoke) {
    ctx.say('  packages/runtime/bench/keygen.bench.ts 1 (method comparison, kept in the JSON)');
    const run = await runTool(
      process.execPath,
      ['--conditions=@pmem-csi/source', '--import', 'tsx', 'packages/runtime/bench/keygen.bench.ts', '1'],
      { cwd: ctx.repo, timeoutMs: 15 * 60_000 },
    );
    keygenBench = run.stdout;
  }
  const figures: FigureSpec[] = [
    {
      id: 'b5.cert-set-ms',
      scenario: 'B5',
      label: 'B5 CA + 2 leaf certificates (median)',
      unit: 'ms',
      reference: null,
      ours: median(runs.map((r) => r.ms)),
    },
    {
      id: 'b5.longest-stall-ms',
      scenario: 'B5',
      label: 'B5 longest event-loop stall meanwhile',
      unit: 'ms',
      reference: null,
      ours: Math.max(...runs.map((r) => r.stallMs)),
    },
  ];
  return { figures, details: { runs, ...(keygenBench === undefined ? {} : { keygenBench }) } };
}
