// tools/phase.mjs: the wrapper .ci/run and package.json's "e2e" script run every CI step through.
// It must not change the step (output, working directory, environment, exit code, a death by a
// signal), and with PMEM_CSI_PHASES it records one line per step; --record turns one complete
// run's lines into the committed result and refuses anything else. Real processes, tiny commands:
// no CI step runs here.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runTool } from '../cluster/processes.js';

const REPO = resolve(import.meta.dirname, '../..', '..');
const PHASE = join(REPO, 'tools/phase.mjs');
const CHAIN = ['npm-test', 'bootstrap', 'images', 'images-0.1.1-e2e', 'e2e-jest', 'real-node', 'qemu', 'npm-run-e2e'];
const CHAIN_TEXT = `(the chain is ${CHAIN.join(', ')})`;
const INCOMPLETE = 'an incomplete run is not a CI time';
const USAGE =
  'usage: node tools/phase.mjs <name> -- <command...>\n' +
  '       node tools/phase.mjs --record <jsonl> --caches warm|cold --out <file>\n';

interface PhaseRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

interface PhaseLine {
  readonly phase: string;
  readonly startedAt: string;
  readonly seconds: number;
  readonly exitCode: number;
  readonly signal?: string;
  readonly load1: { readonly start: number; readonly end: number };
}

/**
 * phase.mjs as a child with captured output, to its end (death by a signal included, which
 * runTool reports only as an error); `onStdout` may act on the output, e.g. send a signal.
 */
function phase(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; onStdout?: (text: string, pid: number) => void } = {},
): Promise<PhaseRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [PHASE, ...args], {
      cwd: options.cwd ?? REPO,
      env: { ...process.env, PMEM_CSI_PHASES: '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
      if (child.pid !== undefined) options.onStdout?.(stdout, child.pid);
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`phase.mjs ${args.join(' ')}: no end after 60 s, killed\n${stderr}`));
    }, 60_000);
    child.on('error', fail);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stdout, stderr });
    });
  });
}

const readLines = async (file: string): Promise<PhaseLine[]> =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as PhaseLine);

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pmem-csi-phase-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('node tools/phase.mjs <name> -- <command...>', () => {
  it("passes the command's output, working directory, environment and exit code through and records one line", async () => {
    const jsonl = join(dir, 'phases.jsonl');
    const before = Date.now();
    const run = await phase(
      [
        'e2e-jest',
        '--',
        process.execPath,
        '-e',
        'setTimeout(() => { console.log(process.cwd(), process.env.PHASE_TEST); console.error("to stderr"); process.exit(3); }, 300)',
      ],
      { cwd: dir, env: { PMEM_CSI_PHASES: jsonl, PHASE_TEST: 'same env' } },
    );
    const after = Date.now();

    expect([run.code, run.signal, run.stdout]).toEqual([3, null, `${dir} same env\n`]);
    const lines = await readLines(jsonl);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(Object.keys(line ?? {})).toEqual(['phase', 'startedAt', 'seconds', 'exitCode', 'load1']);
    expect(line).toMatchObject({ phase: 'e2e-jest', exitCode: 3 });
    const started = Date.parse(line?.startedAt ?? '');
    expect(new Date(started).toISOString()).toBe(line?.startedAt);
    expect(started).toBeGreaterThanOrEqual(before - 1);
    expect(started).toBeLessThanOrEqual(after);
    expect(line?.seconds).toBeGreaterThanOrEqual(0.3);
    expect(line?.seconds).toBeLessThanOrEqual((after - before) / 1000 + 0.05);
    expect(line?.load1.start).toEqual(expect.any(Number));
    expect(line?.load1.end).toEqual(expect.any(Number));
    expect(run.stderr).toBe(
      `to stderr\nphase: e2e-jest ${line?.seconds} s, exit code 3, load ${line?.load1.start} → ${line?.load1.end}; recorded in ${jsonl}\n`,
    );

    // A second phase appends; a relative PMEM_CSI_PHASES is the command's working directory's.
    expect((await phase(['qemu', '--', 'true'], { cwd: dir, env: { PMEM_CSI_PHASES: 'phases.jsonl' } })).code).toBe(0);
    expect((await readLines(jsonl)).map((l) => [l.phase, l.exitCode])).toEqual([
      ['e2e-jest', 3],
      ['qemu', 0],
    ]);
  });

  it('without PMEM_CSI_PHASES writes and prints nothing of its own', async () => {
    const run = await phase(['bootstrap', '--', 'sh', '-c', 'echo out; echo err >&2; exit 7'], { cwd: dir });
    expect(run).toEqual({ code: 7, signal: null, stdout: 'out\n', stderr: 'err\n' });
    const again = await phase(['bootstrap', '--', 'true'], { cwd: dir });
    expect(again).toEqual({ code: 0, signal: null, stdout: '', stderr: '' });
  });

  it('dies of the signal that killed the command, recording 128+n and the signal', async () => {
    const jsonl = join(dir, 'phases.jsonl');
    const run = await phase(['real-node', '--', 'sh', '-c', 'kill -TERM $$'], { env: { PMEM_CSI_PHASES: jsonl } });
    expect([run.code, run.signal]).toEqual([null, 'SIGTERM']);
    expect((await readLines(jsonl)).map((l) => [l.phase, l.exitCode, l.signal])).toEqual([
      ['real-node', 143, 'SIGTERM'],
    ]);
  });

  it('passes SIGTERM on to the command, which decides how to end', async () => {
    const jsonl = join(dir, 'phases.jsonl');
    let sent = false;
    const run = await phase(
      [
        'images',
        '--',
        process.execPath,
        '-e',
        'process.on("SIGTERM", () => { console.log("got SIGTERM"); process.exit(5); }); console.log("ready"); setInterval(() => {}, 1000)',
      ],
      {
        env: { PMEM_CSI_PHASES: jsonl },
        onStdout: (text, pid) => {
          if (!sent && text.includes('ready')) {
            sent = true;
            process.kill(pid, 'SIGTERM');
          }
        },
      },
    );
    expect([run.code, run.signal, run.stdout]).toEqual([5, null, 'ready\ngot SIGTERM\n']);
    expect((await readLines(jsonl)).map((l) => [l.phase, l.exitCode])).toEqual([['images', 5]]);
  });

  it('a command that cannot start exits 127, saying why, and is recorded as failed', async () => {
    const jsonl = join(dir, 'phases.jsonl');
    const run = await phase(['qemu', '--', 'pmem-csi-no-such-command'], { env: { PMEM_CSI_PHASES: jsonl } });
    expect(run.code).toBe(127);
    expect(run.stderr.split('\n')[0]).toBe(
      'phase: qemu: cannot start pmem-csi-no-such-command: spawn pmem-csi-no-such-command ENOENT',
    );
    expect((await readLines(jsonl)).map((l) => [l.phase, l.exitCode])).toEqual([['qemu', 127]]);
  });

  it.each([
    ['no command', ['bootstrap', '--'], USAGE],
    ['no --', ['bootstrap', 'true'], USAGE],
    ['nothing', [], USAGE],
    [
      'a name with capitals',
      ['Bootstrap', '--', 'true'],
      `phase: phase name "Bootstrap": lower-case letters, digits, '.' and '-' only\n`,
    ],
    ['an incomplete --record', ['--record', 'x.jsonl', '--caches', 'warm'], USAGE],
    [
      '--caches of another kind',
      ['--record', 'x.jsonl', '--caches', 'lukewarm', '--out', 'o.json'],
      'phase: --caches must be warm or cold (the caches .ci/run started with), got "lukewarm"\n',
    ],
  ])('refuses %s with exit code 2, saying what is allowed', async (_what, args, message) => {
    const run = await phase(args, { cwd: dir });
    expect([run.code, run.stdout, run.stderr]).toEqual([2, '', message]);
  });
});

describe('node tools/phase.mjs --record', () => {
  let clone = '';
  const git = (...args: string[]): ReturnType<typeof runTool> =>
    runTool('git', ['-C', clone, '-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], {
      timeoutMs: 30_000,
    });

  /** A checkout like a fresh clone's: tmp/ ignored, one commit. */
  beforeEach(async () => {
    clone = join(dir, 'clone');
    await mkdir(join(clone, 'tmp'), { recursive: true });
    await writeFile(join(clone, '.gitignore'), 'tmp/\n');
    await writeFile(join(clone, 'README.md'), '# x\n');
    await git('init', '--quiet');
    await git('add', '.gitignore', 'README.md');
    await git('commit', '--quiet', '-m', 'x');
  });

  const line = (phaseName: string, i: number, extra: Partial<PhaseLine> = {}): PhaseLine => ({
    phase: phaseName,
    startedAt: `2026-12-05T14:0${i}:00.000Z`,
    seconds: 60 * i + 0.5,
    exitCode: 0,
    load1: { start: i / 10, end: i / 10 + 0.05 },
    ...extra,
  });
  const jsonlOf = (lines: readonly PhaseLine[]): string => lines.map((l) => `${JSON.stringify(l)}\n`).join('');
  /** The order phase.mjs appends in: npm-run-e2e ends (and is written) after its steps. */
  const complete = (): PhaseLine[] => CHAIN.map((p, i) => line(p, i));

  const recordRun = async (
    jsonl: string,
    caches = 'warm',
  ): Promise<PhaseRun & { out: string; written: string | undefined }> => {
    const out = join(dir, 'results/ci-times.json');
    const file = join(clone, 'tmp/ci-phases.jsonl');
    await writeFile(file, jsonl);
    const run = await phase(['--record', file, '--caches', caches, '--out', out], { cwd: dir });
    const written = await readFile(out, 'utf8').catch(() => undefined);
    return { ...run, out, written };
  };

  it("writes the committed result of a complete run: date, the clone's commit, machine, caches, phases with load, total", async () => {
    const lines = complete();
    await writeFile(join(clone, 'README.md'), '# changed\n');
    const run = await recordRun(jsonlOf([...lines.slice(1, 7), lines[0], lines[7]].filter((l) => l !== undefined)));
    const commit = (await git('rev-parse', 'HEAD')).stdout.trim();

    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toBe(
      `phase: wrote ${run.out}: warm .ci/run of 2026-12-05, 7 min, commit ${commit.slice(0, 12)} with 1 uncommitted file(s)\n`,
    );
    const result = JSON.parse(run.written ?? '') as Record<string, unknown>;
    expect(result).toEqual({
      version: 1,
      command: '.ci/run',
      caches: 'warm',
      startedAt: '2026-12-05T14:00:00.000Z',
      // npm-test (0.5 s) + npm-run-e2e (420.5 s): the two commands of .ci/run.
      seconds: 421,
      git: { commit, dirty: ['README.md'] },
      machine: {
        cpuModel: expect.any(String),
        cpus: expect.any(Number),
        memoryMiB: expect.any(Number),
        kernel: expect.any(String),
        node: expect.stringMatching(/^v\d+\.\d+\.\d+$/),
      },
      // In chain order whatever order the lines came in; exitCode (0 for all) is not repeated.
      phases: lines.map((l) => ({ phase: l.phase, startedAt: l.startedAt, seconds: l.seconds, load1: l.load1 })),
    });
    // As prettier formats JSON, so that the committed file passes check:format unchanged.
    expect(run.written).toBe(`${JSON.stringify(result, null, 2)}\n`);
  });

  it('refuses a run with a failed phase, naming each with its exit code, and writes nothing', async () => {
    const lines = complete().map((l) =>
      l.phase === 'e2e-jest'
        ? { ...l, exitCode: 1 }
        : l.phase === 'npm-run-e2e'
          ? { ...l, exitCode: 143, signal: 'SIGTERM' }
          : l,
    );
    const run = await recordRun(jsonlOf(lines), 'cold');
    expect([run.code, run.stdout, run.written]).toEqual([1, '', undefined]);
    expect(run.stderr).toBe(
      `phase: refusing to record ${join(clone, 'tmp/ci-phases.jsonl')}: phase e2e-jest failed (exit code 1), ` +
        `phase npm-run-e2e failed (exit code 143, SIGTERM); ${INCOMPLETE}\n`,
    );
  });

  it('refuses a run that stopped early, naming the phases without a line and the chain', async () => {
    // A failed step ends the && chain: nothing after it runs, npm-run-e2e itself fails. Lines of
    // a run that was killed outright (no failure recorded) lack the rest.
    const run = await recordRun(jsonlOf(complete().slice(0, 5)));
    expect([run.code, run.written]).toEqual([1, undefined]);
    expect(run.stderr).toBe(
      `phase: refusing to record ${join(clone, 'tmp/ci-phases.jsonl')}: no line for phase real-node, qemu, npm-run-e2e ` +
        `${CHAIN_TEXT}; ${INCOMPLETE}\n`,
    );
  });

  it.each([
    [
      'a phase recorded twice (two runs in one file)',
      (l: PhaseLine[]) => [...l, ...l.slice(0, 2)],
      'phase npm-test, bootstrap recorded more than once (.ci/run empties the file before a run)',
    ],
    ['a phase not of the chain', (l: PhaseLine[]) => [...l, line('e2e', 9)], `unknown phase e2e ${CHAIN_TEXT}`],
    ['an empty file', () => [], `no line for phase ${CHAIN.join(', ')} ${CHAIN_TEXT}`],
  ])('refuses %s', async (_what, edit, why) => {
    const run = await recordRun(jsonlOf(edit(complete())));
    expect([run.code, run.written]).toEqual([1, undefined]);
    expect(run.stderr).toBe(`phase: refusing to record ${join(clone, 'tmp/ci-phases.jsonl')}: ${why}; ${INCOMPLETE}\n`);
  });

  it('refuses a line that is not a phase line, naming the file and line', async () => {
    const file = join(clone, 'tmp/ci-phases.jsonl');
    const notJson = await recordRun(`${JSON.stringify(line('npm-test', 0))}\n{"phase": "bootstrap",\n`);
    expect([notJson.code, notJson.stderr.startsWith(`phase: ${file} line 2 is not JSON: `)]).toEqual([1, true]);
    const noLoad = await recordRun(`${JSON.stringify({ ...line('npm-test', 0), load1: 0.4 })}\n`);
    expect([noLoad.code, noLoad.stderr]).toEqual([
      1,
      `phase: ${file} line 1 is not a phase line (phase, startedAt, seconds, exitCode, load1 {start, end})\n`,
    ]);
  });

  it('refuses lines outside a git checkout: the result names the commit it measured', async () => {
    const outside = join(dir, 'phases.jsonl');
    await writeFile(outside, jsonlOf(complete()));
    const run = await phase(['--record', outside, '--caches', 'warm', '--out', join(dir, 'o.json')], {
      cwd: dir,
      env: { GIT_CEILING_DIRECTORIES: dir },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `phase: cannot tell the commit of the run: git rev-parse --show-toplevel in ${dir}: fatal: not a git repository (or any of the parent directories): .git\n`,
    );
  });
});

describe('the CI chain', () => {
  it('.ci/run runs exactly `npm test` and `npm run e2e`, each through phase.mjs, into an emptied tmp/ci-phases.jsonl', async () => {
    const steps = (await readFile(join(REPO, '.ci/run'), 'utf8'))
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(steps.slice(-5)).toEqual([
      'mkdir -p tmp',
      'export PMEM_CSI_PHASES="$PWD/tmp/ci-phases.jsonl"',
      ': >"$PMEM_CSI_PHASES"',
      'node tools/phase.mjs npm-test -- npm test',
      'node tools/phase.mjs npm-run-e2e -- npm run e2e',
    ]);
  });

  it('package.json\'s "e2e" runs every step through phase.mjs, named as --record expects: an && chain, then the tiers script', async () => {
    const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const chain = (pkg.scripts.e2e ?? '').split(' && ');
    expect(chain.at(-1)).toBe('bash e2e/tools/tiers.sh');
    const phaseStep = /^node tools\/phase\.mjs (\S+) -- (.+?)(?: 2>&1 \| tee .*| >"\$QEMU_LOG" 2>&1 &)?$/;
    const chained = chain.slice(0, -1).map((s) => phaseStep.exec(s));
    // The tiers script: each tier through phase.mjs (the QEMU tier first, niced, in the background).
    const tiers = (await readFile(join(REPO, 'e2e/tools/tiers.sh'), 'utf8'))
      .split('\n')
      .map((l) => l.trim())
      .map((l) => l.replace(/^nice -n \d+ /, ''))
      .filter((l) => l.startsWith('node tools/phase.mjs '))
      .map((l) => phaseStep.exec(l));
    const steps = [...chained, ...tiers];
    expect(steps.map((m) => [m?.[1], m?.[2]])).toEqual([
      ['bootstrap', 'bash e2e/tools/bootstrap.sh'],
      ['images', 'bash e2e/tools/images.sh'],
      ['images-0.1.1-e2e', 'bash e2e/tools/images.sh --version 0.1.1-e2e'],
      ['qemu', 'bash e2e/qemu/run.sh --timeout 3600 --work "$QEMU_WORK"'],
      [
        'e2e-jest',
        'node tools/run-jest.mjs e2e --config e2e/jest.config.js --testPathIgnorePatterns /node_modules/ /src/realnode/',
      ],
      ['real-node', 'npm run e2e:real-node'],
    ]);
    // With .ci/run's two, exactly the phases --record requires (its refusal message lists them).
    expect(['npm-test', ...steps.map((m) => m?.[1]), 'npm-run-e2e'].sort()).toEqual([...CHAIN].sort());
  });
});
