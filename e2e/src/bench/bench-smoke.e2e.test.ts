// CI smoke of the benchmark harness: `main.ts --smoke` (the production build, the Go tools, every
// scenario B1-B5 in short form) must run to the end, print a table row for every figure and write
// the JSON with a number for each. It asserts that the benchmark ran, not that targets are met:
// the figures are reported (see e2e/bench/README.md), never timed-tested. B2 needs root with loop
// devices (CI runs as root); without them this test fails and says so.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runTool } from '../cluster/processes.js';
import { formatSpan } from './figures.js';
import type { BenchResult } from './main.js';

const REPO = resolve(import.meta.dirname, '../../..');

/** Figures with a Go (or shell) reference. */
const WITH_REFERENCE = [
  'b1.single-hop.c1.pairs-per-s',
  'b1.single-hop.c32.pairs-per-s',
  'b1.single-hop.c32.server-cpu-ms-per-pair',
  'b1.info.c32.calls-per-s',
  'b3.rss-idle-mib',
  'b3.rss-after-load-mib',
  'b3.rss-anon-idle-mib',
  'b3.rss-anon-after-load-mib',
  'b2.emulated.ms-per-volume',
  'b3.start-to-probe-ms',
];
const OURS_ONLY = [
  'b1.e2e.c1.pairs-per-s',
  'b1.e2e.c32.pairs-per-s',
  ...[10, 100].flatMap((n) =>
    [
      'all-available-s',
      'lease-expiries',
      'renewal-cpu-percent',
      'renewal-p99-ms',
      'controller-rss-mib',
      'create-p50-ms',
      'create-p99-ms',
      'pairs-per-s',
    ].map((f) => `b4.n${n}.${f}`),
  ),
  'b5.cert-set-ms',
  'b5.longest-stall-ms',
];

describe('benchmark harness, smoke mode', () => {
  let dir = '';
  afterAll(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it(
    'runs B1-B5 and reports every figure with a number',
    async () => {
      if (process.getuid?.() !== 0)
        throw new Error('the smoke run includes B2 (loop devices, mkfs, mount), which needs root; CI runs as root');
      dir = await mkdtemp(join(tmpdir(), 'pmem-csi-bench-smoke-'));
      const out = join(dir, 'smoke.json');
      const run = await runTool(
        process.execPath,
        ['--conditions=@pmem-csi/source', '--import', 'tsx', 'e2e/src/bench/main.ts', '--smoke', '--out', out],
        {
          cwd: REPO,
          timeoutMs: 8 * 60_000,
        },
      );
      process.stdout.write(`${run.stdout}\n`);
      const result = JSON.parse(readFileSync(out, 'utf8')) as BenchResult;
      expect([result.version, result.mode, result.command]).toEqual([
        2,
        'smoke',
        `npm run bench -- --smoke --out ${out}`,
      ]);
      expect(result.scenarios.map((s) => [s.scenario, s.error ?? s.skipped ?? 'ran'])).toEqual([
        ['B1', 'ran'],
        ['B2', 'ran'],
        ['B3', 'ran'],
        ['B4', 'ran'],
        ['B5', 'ran'],
      ]);
      for (const s of result.scenarios) expect(s.before.cpus).toBeGreaterThan(0);
      const ids = result.figures.map((f) => f.id);
      expect([...ids].sort()).toEqual([...WITH_REFERENCE, ...OURS_ONLY].sort());
      const notNumbers = result.figures
        .filter((f) => typeof f.ours !== 'number' || !Number.isFinite(f.ours))
        .map((f) => f.id);
      expect(notNumbers).toEqual([]);
      const noReference = result.figures
        .filter(
          (f) => WITH_REFERENCE.includes(f.id) && (typeof f.reference !== 'number' || !Number.isFinite(f.reference)),
        )
        .map((f) => f.id);
      expect(noReference).toEqual([]);
      // One table row per figure, between the header and the load line, with the load average
      // over its measurement in the last column (the JSON keeps the same span).
      const rows = run.stdout.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| figure '));
      expect(rows.map((r) => r.split('|')[1]?.trim())).toEqual(result.figures.map((f) => f.label));
      expect(rows.map((r) => r.split('|').at(-2)?.trim())).toEqual(result.figures.map((f) => formatSpan(f.load)));
      expect(result.figures.filter((f) => !(f.load.start >= 0 && f.load.end >= 0)).map((f) => f.id)).toEqual([]);
    },
    10 * 60_000,
  );
});
