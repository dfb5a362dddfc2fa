// The README's Performance table is rendered from the committed bench result only, and the
// generator's --check fails naming README.md when the table differs (tools/gen-perf.ts, run by
// `npm run check:generated`). No benchmark runs here: the result is a fixture.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runTool } from '../cluster/processes.js';
import {
  BEGIN_MARKER,
  BenchResultError,
  END_MARKER,
  ReadmeMarkersError,
  performanceReadme,
  readCommittedResult,
  renderPerformance,
  spliceBlock,
} from './readme.js';
import { COMMITTED_RESULT, type BenchResult } from './result.js';

const REPO = resolve(import.meta.dirname, '../../..');
const FIXTURE = join(import.meta.dirname, '__fixtures__/bench-result.json');
const fixture = async (): Promise<BenchResult> => JSON.parse(await readFile(FIXTURE, 'utf8')) as BenchResult;

const TABLE = [
  '| figure                     | Go reference | ours     | target    | ratio | met? | load (1 min) |',
  '|----------------------------|--------------|----------|-----------|-------|------|--------------|',
  '| B1 pairs/s single hop c=32 | 8606 /s      | 1723 /s  | ≥ 0.5× Go | 0.2   | NO   | 0.41 → 2.87  |',
  '| B3 node RSS idle           | 11.41 MiB    | 63.2 MiB | ≤ 70 MiB  | 5.54  | yes  | 0.35         |',
  '| B4 10 nodes: all available | —            | 0.508 s  | ≤ 10 s    | —     | yes  | 0.62 → 1.04  |',
];

const NO_RESULT = [
  'No full run is committed yet: `npm run bench` on a quiet machine writes `e2e/bench/results/bench.json`;',
  'commit it and run `npm run generate`. The figures typed by hand before this table was generated',
  '(2026-12-01) are in `e2e/bench/README.md`.',
].join('\n');

describe('renderPerformance', () => {
  it('renders date, command, commit, machine, load range, per-scenario start load and the table with load per figure', async () => {
    expect(renderPerformance(await fixture())).toBe(
      [
        '`npm run bench` (full run) on 2026-12-05 14:03 UTC, 14 min 12 s, commit 0123456789ab.',
        'Machine: Test CPU @ 2.00GHz, 2 CPUs, 23.5 GiB, Linux 6.1.0-28-amd64, Node.js v24.22.3.',
        'Load average (1 min) over the figures 0.35–2.87; when each scenario started: B1 0.41, B2 1.2, B4 0.62;',
        'busy above 1.5 (0.75 × 2 CPUs).',
        '',
        '- B2 skipped: not root: emulated devices need loop devices',
        '',
        ...TABLE,
      ].join('\n'),
    );
  });

  it('says in bold that a result written with --allow-busy is from a busy machine, naming scenario, load, threshold and figures', async () => {
    const r = await fixture();
    const busy: BenchResult = {
      ...r,
      git: { commit: r.git?.commit ?? '', dirty: ['README.md', 'e2e/src/bench/main.ts'] },
      busy: true,
      busyScenarios: [
        { scenario: 'B1', load: 2.31, threshold: 1.5, figures: ['b1.single-hop.c32.pairs-per-s', 'b3.rss-idle-mib'] },
      ],
      scenarios: r.scenarios.map((s) =>
        s.scenario === 'B1' ? { ...s, before: { ...s.before, loadavg: [2.31, 1.2, 0.8] } } : s,
      ),
    };
    expect(renderPerformance(busy)).toBe(
      [
        '`npm run bench` (full run) on 2026-12-05 14:03 UTC, 14 min 12 s, commit 0123456789ab with uncommitted changes to 2 files.',
        'Machine: Test CPU @ 2.00GHz, 2 CPUs, 23.5 GiB, Linux 6.1.0-28-amd64, Node.js v24.22.3.',
        'Load average (1 min) over the figures 0.35–2.87; when each scenario started: B1 2.31, B2 1.2, B4 0.62;',
        'busy above 1.5 (0.75 × 2 CPUs).',
        '',
        '**Measured on a busy machine** (written with `--allow-busy`): compare these figures with care.',
        '- B1 started at load average (1 min) 2.31, above the threshold 1.5 (0.75 × 2 CPUs); its figures: b1.single-hop.c32.pairs-per-s, b3.rss-idle-mib',
        '',
        '- B2 skipped: not root: emulated devices need loop devices',
        '',
        ...TABLE,
      ].join('\n'),
    );
  });

  it('shows no figures at all when no result is committed', () => {
    expect(renderPerformance(undefined)).toBe(NO_RESULT);
  });
});

describe('spliceBlock', () => {
  const readme = `# x\n\n## Performance\n${BEGIN_MARKER}\nold table\n${END_MARKER}\n\n## Status\n`;

  it('replaces exactly the text between the markers', () => {
    expect(spliceBlock(readme, 'new\ntable')).toBe(
      `# x\n\n## Performance\n${BEGIN_MARKER}\nnew\ntable\n${END_MARKER}\n\n## Status\n`,
    );
  });

  it.each([
    ['no markers', '# x\n', 'found 0 and 0'],
    ['two begin markers', `${BEGIN_MARKER}\n${readme}`, 'found 2 and 1'],
    ['the end before the begin', `${END_MARKER}\n${BEGIN_MARKER}\n`, 'found 1 and 1, in the wrong order'],
  ])('refuses a README with %s, naming the file and both markers', (_what, text, found) => {
    const call = (): string => spliceBlock(text, 'x');
    expect(call).toThrow(ReadmeMarkersError);
    expect(call).toThrow(
      `README.md must hold the line ${BEGIN_MARKER} once, followed by ${END_MARKER} once (${found})`,
    );
  });
});

describe('the committed result and the generator', () => {
  let root = '';
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'pmem-csi-gen-perf-'));
    await mkdir(join(root, 'e2e/bench/results'), { recursive: true });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const genPerf = (...args: string[]): ReturnType<typeof runTool> =>
    runTool(process.execPath, ['--import', 'tsx', 'tools/gen-perf.ts', ...args, '--root', root], {
      cwd: REPO,
      timeoutMs: 120_000,
      okCodes: [0, 1],
    });

  it('reads no result when the file is missing, and refuses one of another version naming file and field', async () => {
    await expect(readCommittedResult(root)).resolves.toBeUndefined();
    await writeFile(join(root, COMMITTED_RESULT), JSON.stringify({ version: 1, figures: [] }));
    await expect(readCommittedResult(root)).rejects.toThrow(BenchResultError);
    await expect(readCommittedResult(root)).rejects.toThrow(
      'e2e/bench/results/bench.json: version is 1, this generator reads version 2 (write it with `npm run bench`)',
    );
    await writeFile(join(root, COMMITTED_RESULT), '{"version": 2,');
    await expect(readCommittedResult(root)).rejects.toThrow(/^e2e\/bench\/results\/bench\.json: not JSON: /);
  });

  it('--check fails naming README.md when its table differs from the committed result; writing fixes it', async () => {
    await writeFile(join(root, COMMITTED_RESULT), await readFile(FIXTURE, 'utf8'));
    await writeFile(join(root, 'README.md'), `# x\n${BEGIN_MARKER}\n| typed by hand | 1 |\n${END_MARKER}\n`);

    const stale = await genPerf('--check');
    expect(stale.code).toBe(1);
    expect(stale.stderr).toBe(
      'gen-perf: stale generated block in README.md (the Performance table, from e2e/bench/results/bench.json)\n' +
        '  regenerate with: npx tsx tools/gen-perf.ts\n',
    );

    expect((await genPerf()).stdout).toBe('gen-perf: wrote the Performance table of README.md\n');
    expect(await readFile(join(root, 'README.md'), 'utf8')).toBe(
      `# x\n${BEGIN_MARKER}\n${renderPerformance(await fixture())}\n${END_MARKER}\n`,
    );
    const fresh = await genPerf('--check');
    expect([fresh.code, fresh.stdout]).toEqual([0, 'gen-perf: README.md Performance table is up to date\n']);
  });

  it('--check fails when the README lacks the markers, saying so', async () => {
    await writeFile(join(root, 'README.md'), '# x\n');
    const run = await genPerf('--check');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `gen-perf: README.md must hold the line ${BEGIN_MARKER} once, followed by ${END_MARKER} once (found 0 and 0)\n`,
    );
  });

  it("this repository's README is what the committed result (or its absence) renders", async () => {
    const { current, wanted } = await performanceReadme(REPO);
    expect(current).toBe(wanted);
  });
});
