// B6 (manual only, `--soak`): packages/driver/bench/soak.bench.ts with a longer run — controller and
// three fake nodes in one process, create+delete pairs round after round — and its heap trend.
import { runTool } from '../cluster/processes.js';
import type { FigureSpec } from './figures.js';
import type { ScenarioResult } from './scenario.js';
import type { BenchContext } from './setup.js';

/** Rounds, pairs per round, concurrency of the long soak. */
export const SOAK_ARGS = ['30', '2000', '16'] as const;

export async function runB6(ctx: BenchContext): Promise<ScenarioResult> {
  const run = await runTool(
    process.execPath,
    [
      '--expose-gc',
      '--conditions=@pmem-csi/source',
      '--import',
      'tsx',
      'packages/driver/bench/soak.bench.ts',
      ...SOAK_ARGS,
    ],
    {
      cwd: ctx.repo,
      timeoutMs: 60 * 60_000,
    },
  );
  const m = /heap trend[^:]*: (-?[\d.]+) KiB per 1000 operations/.exec(run.stdout);
  const figures: FigureSpec[] = [
    {
      id: 'b6.heap-trend-kib-per-1000-ops',
      scenario: 'B6',
      label: `B6 soak heap trend (${SOAK_ARGS[0]} rounds × ${SOAK_ARGS[1]} pairs)`,
      unit: 'KiB/1000 ops',
      reference: null,
      ours: m?.[1] === undefined ? null : Number(m[1]),
    },
  ];
  return { figures, details: { output: run.stdout } };
}
