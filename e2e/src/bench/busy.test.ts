// The busy-machine guard of the committed bench result: the threshold, which scenarios count as
// busy, the refusal (exact message, the result sent to latest.json), --allow-busy (committed and
// marked busy), the wait for a quiet machine, and the load span kept per figure.
import { assembleResult, benchCommand, figureRecords, type RunFacts } from './assemble.js';
import { busyScenarios, loadThreshold, planWrite, waitQuiet } from './busy.js';
import type { FigureSpec } from './figures.js';
import { LoadLog } from './machine.js';
import type { ScenarioRecord } from './result.js';

const REPO = '/repo';
const COMMITTED = '/repo/e2e/bench/results/bench.json';
const LATEST = '/repo/e2e/bench/results/latest.json';
const THRESHOLD = loadThreshold(2);

const spec = (id: string, scenario: string): FigureSpec => ({
  id,
  scenario,
  label: id,
  unit: 'ms',
  reference: null,
  ours: 1,
  target: { kind: 'max', value: 2 },
});

function record(scenario: string, [before, after]: [number, number], ids: string[], skipped?: string): ScenarioRecord {
  const sample = (load: number): ScenarioRecord['before'] => ({
    at: '2026-12-05T00:00:00.000Z',
    loadavg: [load, 0, 0],
    cpus: 2,
  });
  return {
    scenario,
    figures: ids.map((id) => spec(id, scenario)),
    details: {},
    seconds: 1,
    before: sample(before),
    after: sample(after),
    ...(skipped === undefined ? {} : { skipped }),
  };
}

const RECORDS = [
  record('B1', [2.31, 3.4], ['b1.a', 'b1.b']),
  record('B2', [9, 9], [], 'not root'),
  record('B3', [1.5, 1.7], ['b3.a']),
  record('B4', [1.51, 2], ['b4.a']),
];

const REFUSAL = [
  'not writing e2e/bench/results/bench.json: the machine was busy.',
  '  B1 started at load average (1 min) 2.31, above the threshold 1.5 (0.75 × 2 CPUs); its figures: b1.a, b1.b',
  '  B4 started at load average (1 min) 1.51, above the threshold 1.5 (0.75 × 2 CPUs); its figures: b4.a',
  'The result is in e2e/bench/results/latest.json. Rerun `npm run bench` on a quiet machine, or add --allow-busy to commit it marked busy.',
].join('\n');

describe('the busy threshold', () => {
  it('is 0.75 per CPU', () => {
    expect(loadThreshold(2)).toEqual({ perCpu: 0.75, cpus: 2, value: 1.5 });
    expect(loadThreshold(8)).toEqual({ perCpu: 0.75, cpus: 8, value: 6 });
    expect(loadThreshold(1)).toEqual({ perCpu: 0.75, cpus: 1, value: 0.75 });
  });

  it('counts the scenarios that ran and started above it (not at it, not skipped ones)', () => {
    expect(busyScenarios(RECORDS, THRESHOLD)).toEqual([
      { scenario: 'B1', load: 2.31, threshold: 1.5, figures: ['b1.a', 'b1.b'] },
      { scenario: 'B4', load: 1.51, threshold: 1.5, figures: ['b4.a'] },
    ]);
  });
});

describe('planWrite', () => {
  const request = {
    repo: REPO,
    out: COMMITTED,
    committed: true,
    allowBusy: false,
    threshold: THRESHOLD,
    latest: LATEST,
  };

  it('refuses the committed file when a scenario started busy, naming scenario, load, threshold and figures', () => {
    expect(planWrite({ ...request, busy: busyScenarios(RECORDS, THRESHOLD) })).toEqual({
      path: LATEST,
      refusal: REFUSAL,
    });
  });

  it('writes the committed file on a quiet machine, with --allow-busy, and any other file regardless', () => {
    const busy = busyScenarios(RECORDS, THRESHOLD);
    expect(planWrite({ ...request, busy: [] })).toEqual({ path: COMMITTED });
    expect(planWrite({ ...request, busy, allowBusy: true })).toEqual({ path: COMMITTED });
    expect(planWrite({ ...request, busy, out: '/tmp/smoke.json', committed: false })).toEqual({
      path: '/tmp/smoke.json',
    });
  });
});

describe('assembleResult', () => {
  const facts: RunFacts = {
    smoke: false,
    startedAt: '2026-12-05T14:03:27.512Z',
    seconds: 852.4,
    command: benchCommand([]),
    git: { commit: 'abc', dirty: [] },
    machine: { cpuModel: 'cpu', cpus: 2, memoryMiB: 1024, node: 'v24.22.3', kernel: '6.1.0' },
    benchTool: '/bench',
    threshold: THRESHOLD,
  };
  const loads = { spanOf: (id: string) => (id === 'b1.a' ? { start: 0.4, end: 2.9 } : undefined) };
  const dest = { repo: REPO, out: COMMITTED, committed: true, latest: LATEST };

  it('refuses a busy full run: the result goes to latest.json, marked busy', () => {
    const { result, plan } = assembleResult(facts, RECORDS, loads, { ...dest, allowBusy: false });
    expect(plan).toEqual({ path: LATEST, refusal: REFUSAL });
    expect([result.busy, result.busyScenarios.map((b) => b.scenario)]).toEqual([true, ['B1', 'B4']]);
  });

  it('--allow-busy: the committed file, marked "busy": true with the busy scenarios', () => {
    const { result, plan } = assembleResult(facts, RECORDS, loads, { ...dest, allowBusy: true });
    expect(plan).toEqual({ path: COMMITTED });
    expect(result).toMatchObject({
      version: 2,
      mode: 'full',
      command: 'npm run bench',
      busy: true,
      loadThreshold: { perCpu: 0.75, cpus: 2, value: 1.5 },
      busyScenarios: [
        { scenario: 'B1', load: 2.31, threshold: 1.5, figures: ['b1.a', 'b1.b'] },
        { scenario: 'B4', load: 1.51, threshold: 1.5, figures: ['b4.a'] },
      ],
    });
  });

  it('a quiet run is not busy', () => {
    const quiet = RECORDS.filter((r) => r.scenario === 'B3');
    const { result, plan } = assembleResult(facts, quiet, loads, { ...dest, allowBusy: false });
    expect([result.busy, result.busyScenarios, plan]).toEqual([false, [], { path: COMMITTED }]);
  });

  it('gives each figure the load of its own measurement, else its scenario start and end', () => {
    expect(figureRecords(RECORDS, loads).map((f) => [f.id, f.load, f.met])).toEqual([
      ['b1.a', { start: 0.4, end: 2.9 }, true],
      ['b1.b', { start: 2.31, end: 3.4 }, true],
      ['b3.a', { start: 1.5, end: 1.7 }, true],
      ['b4.a', { start: 1.51, end: 2 }, true],
    ]);
  });

  it('names the command that repeats the run', () => {
    expect(benchCommand([])).toBe('npm run bench');
    expect(benchCommand(['--allow-busy', '--keep'])).toBe('npm run bench -- --allow-busy --keep');
  });
});

describe('waitQuiet', () => {
  const run = async (loads: number[]): Promise<{ load: number; slept: number[]; said: string[]; samples: number }> => {
    const queue = [...loads];
    const slept: number[] = [];
    const said: string[] = [];
    let samples = 0;
    const load = await waitQuiet({
      threshold: THRESHOLD,
      sample: () => {
        samples++;
        return queue.length > 1 ? (queue.shift() ?? 0) : (queue[0] ?? 0);
      },
      sleep: (ms) => {
        slept.push(ms);
        return Promise.resolve();
      },
      say: (l) => said.push(l),
      maxMs: 20_000,
      pollMs: 5_000,
    });
    return { load, slept, said, samples };
  };

  it('does not wait on a quiet machine', async () => {
    expect(await run([1.5])).toEqual({ load: 1.5, slept: [], said: [], samples: 1 });
  });

  it('waits while the load falls to the threshold', async () => {
    expect(await run([3.2, 2.1, 1.4])).toEqual({
      load: 1.4,
      slept: [5000, 5000],
      said: ['  waiting up to 20 s for load 3.2 to fall to 1.5 (0.75 × 2 CPUs)', '  load 1.4: quiet'],
      samples: 3,
    });
  });

  it('gives up after the longest wait and says the machine is busy', async () => {
    expect(await run([4, 3.9])).toEqual({
      load: 3.9,
      slept: [5000, 5000, 5000, 5000],
      said: ['  waiting up to 20 s for load 4 to fall to 1.5 (0.75 × 2 CPUs)', '  load still 3.9: the machine is busy'],
      samples: 5,
    });
  });
});

describe('LoadLog', () => {
  it('records the load at the start and end of each measurement; a figure measured twice spans both', async () => {
    const samples = [0.4, 1.2, 2.5, 3.1];
    const log = new LoadLog(() => samples.shift() ?? -1);
    await expect(log.measure(['a', 'b'], () => Promise.resolve('first'))).resolves.toBe('first');
    await log.measure(['b'], () => Promise.resolve());
    expect([log.spanOf('a'), log.spanOf('b'), log.spanOf('c')]).toEqual([
      { start: 0.4, end: 1.2 },
      { start: 0.4, end: 3.1 },
      undefined,
    ]);
  });

  it('records nothing for a measurement that failed', async () => {
    const log = new LoadLog(() => 1);
    await expect(log.measure(['a'], () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(log.spanOf('a')).toBeUndefined();
  });
});
