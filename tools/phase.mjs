#!/usr/bin/env node
// Times one step of CI and, from a whole run's lines, writes the committed CI-time result that the
// README's CI-time line is generated from (tools/gen-ci-times.ts), so no CI time is typed by hand.
//
//   node tools/phase.mjs <name> -- <command...>
//     Runs the command (same working directory, environment and stdio), exits with its exit code
//     (a command killed by a signal kills this process with the same signal). With
//     PMEM_CSI_PHASES=<file> it appends one JSON line to the file:
//       {"phase", "startedAt" (ISO), "seconds", "exitCode", "signal"?, "load1": {"start", "end"}}
//     (exitCode 128+n for a command killed by signal n, as a shell reports it; load1 is the 1-min
//     load average when the command started and ended) and prints that line's summary to stderr.
//     Without it nothing is written or printed. SIGINT, SIGTERM and SIGHUP sent to this process
//     go to the command, as npm run does; the command decides how to end.
//
//   node tools/phase.mjs --record <jsonl> --caches warm|cold --out <file>
//     Turns the lines of one `.ci/run` (which empties tmp/ci-phases.jsonl first) into the result
//     file (e2e/results/ci-times.json): date, the commit of the run's checkout (the git work tree
//     the jsonl lies in) and its uncommitted files, this machine (run it where .ci/run ran), the
//     declared cache state, every phase with its seconds and load, the total. An incomplete run is
//     not a CI time: a phase that failed, is missing, came twice or is not of the chain is refused.
//
// Plain Node.js, no dependencies: .ci/run starts it before `npm test` has installed anything, on
// whatever node the machine has.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { constants, cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const USAGE =
  'usage: node tools/phase.mjs <name> -- <command...>\n' +
  '       node tools/phase.mjs --record <jsonl> --caches warm|cold --out <file>\n';

/**
 * The phases of one `.ci/run`, in order: .ci/run's two commands (the README's) and, inside the
 * second, each step of package.json's "e2e" script. npm-run-e2e's line comes last: it ends last.
 */
const CHAIN = ['npm-test', 'bootstrap', 'images', 'images-0.1.1-e2e', 'e2e-jest', 'real-node', 'qemu', 'npm-run-e2e'];
const RESULT_VERSION = 1;
const NAME = /^[a-z0-9][a-z0-9.-]*$/;
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const GIT_TIMEOUT_MS = 10_000;

/** A refusal or bad input: printed as `phase: <message>`, exit code 1 (2 for usage). */
class PhaseError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.name = 'PhaseError';
    this.exitCode = exitCode;
  }
}

const hundredths = (v) => Math.round(v * 100) / 100;
const load1 = () => hundredths(loadavg()[0] ?? 0);
const tenths = (v) => Math.round(v * 10) / 10;

// ---- running one phase ----

function appendLine(file, line) {
  try {
    mkdirSync(dirname(resolve(file)), { recursive: true });
    appendFileSync(file, `${JSON.stringify(line)}\n`);
    process.stderr.write(
      `phase: ${line.phase} ${line.seconds} s, exit code ${line.exitCode}` +
        `${line.signal ? ` (${line.signal})` : ''}, load ${line.load1.start} → ${line.load1.end}; recorded in ${file}\n`,
    );
  } catch (e) {
    // The command's exit code still passes through; --record then refuses the run (a line is missing).
    process.stderr.write(`phase: ${line.phase}: cannot append to PMEM_CSI_PHASES=${file}: ${e.message}\n`);
  }
}

function runPhase(name, command) {
  const file = process.env.PMEM_CSI_PHASES || undefined;
  const startedAt = new Date();
  const start = load1();
  const t0 = process.hrtime.bigint();
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  const forward = (signal) => child.kill(signal);
  for (const s of FORWARDED) process.on(s, forward);

  const finish = (exitCode, signal) => {
    for (const s of FORWARDED) process.off(s, forward);
    if (file !== undefined) {
      const seconds = tenths(Number(process.hrtime.bigint() - t0) / 1e9);
      const line = { phase: name, startedAt: startedAt.toISOString(), seconds, exitCode };
      if (signal) line.signal = signal;
      line.load1 = { start, end: load1() };
      appendLine(file, line);
    }
    if (signal) {
      // Die of the same signal, so that the shell or npm above sees what the command did.
      process.kill(process.pid, signal);
      setTimeout(() => process.exit(exitCode), 1000).unref();
      return;
    }
    process.exit(exitCode);
  };
  child.on('error', (e) => {
    process.stderr.write(`phase: ${name}: cannot start ${command[0]}: ${e.message}\n`);
    finish(127, undefined);
  });
  child.on('exit', (code, signal) => {
    if (signal) finish(128 + (constants.signals[signal] ?? 0), signal);
    else finish(code ?? 1, undefined);
  });
}

// ---- recording a run ----

function git(dir, args) {
  const r = spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8', timeout: GIT_TIMEOUT_MS });
  if (r.status !== 0) {
    const why = r.error ? r.error.message : (r.stderr.trim().split('\n')[0] ?? `exit code ${r.status}`);
    throw new PhaseError(`cannot tell the commit of the run: git ${args.join(' ')} in ${dir}: ${why}`);
  }
  return r.stdout;
}

/** The commit and uncommitted files of the checkout `dir` lies in, and that checkout's root. */
function gitState(dir) {
  const top = git(dir, ['rev-parse', '--show-toplevel']).trim();
  const commit = git(dir, ['rev-parse', 'HEAD']).trim();
  const dirty = git(dir, ['status', '--porcelain'])
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.slice(3))
    .sort();
  return { top, git: { commit, dirty } };
}

/** The pinned Node.js of the run's checkout (what the tests ran on), else this process's. */
function nodeOf(top) {
  const bin = join(top, 'node_modules/.bin/node');
  if (existsSync(bin)) {
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: GIT_TIMEOUT_MS });
    if (r.status === 0) return r.stdout.trim();
  }
  return process.version;
}

function machine(top) {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cpus: list.length,
    memoryMiB: Math.round(totalmem() / 1024 ** 2),
    kernel: release(),
    node: nodeOf(top),
  };
}

const isLoad = (v) => typeof v === 'object' && v !== null && typeof v.start === 'number' && typeof v.end === 'number';

function parseLines(file, text) {
  return text.split('\n').flatMap((raw, i) => {
    if (raw.trim() === '') return [];
    let v;
    try {
      v = JSON.parse(raw);
    } catch (e) {
      throw new PhaseError(`${file} line ${i + 1} is not JSON: ${e.message}`);
    }
    const ok =
      typeof v === 'object' &&
      v !== null &&
      typeof v.phase === 'string' &&
      typeof v.startedAt === 'string' &&
      typeof v.seconds === 'number' &&
      typeof v.exitCode === 'number' &&
      isLoad(v.load1);
    if (!ok)
      throw new PhaseError(
        `${file} line ${i + 1} is not a phase line (phase, startedAt, seconds, exitCode, load1 {start, end})`,
      );
    return [v];
  });
}

/** The run's lines by phase, in chain order; refuses anything that is not one complete run. */
function completeRun(file, lines) {
  const refuse = (why) => new PhaseError(`refusing to record ${file}: ${why}; an incomplete run is not a CI time`);
  const chain = `(the chain is ${CHAIN.join(', ')})`;
  const failed = lines.filter((l) => l.exitCode !== 0);
  if (failed.length > 0)
    throw refuse(
      failed
        .map((l) => `phase ${l.phase} failed (exit code ${l.exitCode}${l.signal ? `, ${l.signal}` : ''})`)
        .join(', '),
    );
  const unknown = lines.filter((l) => !CHAIN.includes(l.phase)).map((l) => l.phase);
  if (unknown.length > 0) throw refuse(`unknown phase ${unknown.join(', ')} ${chain}`);
  const twice = CHAIN.filter((p) => lines.filter((l) => l.phase === p).length > 1);
  if (twice.length > 0)
    throw refuse(`phase ${twice.join(', ')} recorded more than once (.ci/run empties the file before a run)`);
  const missing = CHAIN.filter((p) => !lines.some((l) => l.phase === p));
  if (missing.length > 0) throw refuse(`no line for phase ${missing.join(', ')} ${chain}`);
  return CHAIN.map((p) => lines.find((l) => l.phase === p));
}

function record(options) {
  const { jsonl, caches, out } = options;
  if (caches !== 'warm' && caches !== 'cold')
    throw new PhaseError(
      `--caches must be warm or cold (the caches .ci/run started with), got ${JSON.stringify(caches)}`,
      2,
    );
  let text;
  try {
    text = readFileSync(jsonl, 'utf8');
  } catch (e) {
    throw new PhaseError(`cannot read ${jsonl}: ${e.message}`);
  }
  const phases = completeRun(jsonl, parseLines(jsonl, text));
  const { top, git: gitInfo } = gitState(dirname(resolve(jsonl)));
  const outer = phases.filter((p) => p.phase === 'npm-test' || p.phase === 'npm-run-e2e');
  const result = {
    version: RESULT_VERSION,
    command: '.ci/run',
    caches,
    startedAt: phases[0].startedAt,
    seconds: tenths(outer.reduce((sum, p) => sum + p.seconds, 0)),
    git: gitInfo,
    machine: machine(top),
    phases: phases.map((p) => ({
      phase: p.phase,
      startedAt: p.startedAt,
      seconds: p.seconds,
      load1: { start: p.load1.start, end: p.load1.end },
    })),
  };
  mkdirSync(dirname(resolve(out)), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(
    `phase: wrote ${out}: ${caches} .ci/run of ${result.startedAt.slice(0, 10)}, ${tenths(result.seconds / 60)} min, ` +
      `commit ${gitInfo.commit.slice(0, 12)}${gitInfo.dirty.length > 0 ? ` with ${gitInfo.dirty.length} uncommitted file(s)` : ''}\n`,
  );
}

// ---- command line ----

function parseRecord(args) {
  const options = {};
  const flags = { '--record': 'jsonl', '--caches': 'caches', '--out': 'out' };
  for (let i = 0; i < args.length; i += 2) {
    const key = flags[args[i]];
    if (key === undefined || args[i + 1] === undefined || key in options) return undefined;
    options[key] = args[i + 1];
  }
  return 'jsonl' in options && 'caches' in options && 'out' in options ? options : undefined;
}

function main(args) {
  if (args[0] === '--record') {
    const options = parseRecord(args);
    if (options === undefined) throw new PhaseError(USAGE.trimEnd(), 2);
    record(options);
    return;
  }
  const [name, dashes, ...command] = args;
  if (name === undefined || dashes !== '--' || command.length === 0) throw new PhaseError(USAGE.trimEnd(), 2);
  if (!NAME.test(name))
    throw new PhaseError(`phase name ${JSON.stringify(name)}: lower-case letters, digits, '.' and '-' only`, 2);
  runPhase(name, command);
}

try {
  main(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof PhaseError)) throw e;
  process.stderr.write(e.message.startsWith('usage:') ? `${e.message}\n` : `phase: ${e.message}\n`);
  process.exitCode = e.exitCode;
}
