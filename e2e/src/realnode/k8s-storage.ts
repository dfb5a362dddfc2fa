// Runs Kubernetes' External Storage suite (e2e.test of the pinned Kubernetes, bootstrap.sh tool
// kubernetes-e2e) against the driver installed on the real node, through the e2e command runner
// with a hard time limit, and turns its JUnit report into counts, failures and the RESULTS.md table.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTool, ToolError } from '../cluster/processes.js';
import { countOutcomes, readStorageReport, type StorageReport, type StorageSpecResult } from './k8s-storage-junit.js';
import {
  DEFINITIONS,
  focusExpression,
  fullSpecText,
  type Definition,
  type SpecRef,
  type StorageSkip,
} from './k8s-storage-specs.js';

export type StorageRunMode = 'curated' | 'full';

/** PMEM_CSI_K8S_STORAGE: unset or "curated" (CI), or "full" (every External Storage spec). */
export function runModeFrom(env: NodeJS.ProcessEnv): StorageRunMode {
  const v = env['PMEM_CSI_K8S_STORAGE'];
  if (v === undefined || v === '' || v === 'curated') return 'curated';
  if (v === 'full') return 'full';
  throw new Error(`PMEM_CSI_K8S_STORAGE=${JSON.stringify(v)} is not a run mode; allowed: curated (default), full`);
}

export interface SuiteRunOptions {
  readonly e2eTest: string;
  readonly kubeconfig: string;
  /** --repo-root: the checkout (the definitions name their StorageClass files relative to it). */
  readonly repoRoot: string;
  /** Where the JUnit report and the output go (emptied first). */
  readonly dir: string;
  readonly definitions: readonly Definition[];
  readonly focus: string;
  readonly skip?: string;
  readonly skips: readonly StorageSkip[];
  /** Hard limit of the whole e2e.test run; Ginkgo's own suite timeout is set a minute below. */
  readonly timeoutMs: number;
  /** List the selected specs (Ginkgo's dry run: every selected spec "passes" without running). */
  readonly dryRun?: boolean;
}

export interface SuiteRun {
  readonly report: StorageReport;
  readonly exitCode: number;
  readonly ms: number;
  readonly outputFile: string;
  readonly junitFile: string;
}

/** e2e.test's command line. */
export function e2eTestArgs(o: Omit<SuiteRunOptions, 'e2eTest' | 'skips'>): string[] {
  const ginkgoTimeoutS = Math.max(60, Math.floor(o.timeoutMs / 1000) - 60);
  return [
    `--kubeconfig=${o.kubeconfig}`,
    '--provider=local',
    `--repo-root=${o.repoRoot}`,
    `--report-dir=${o.dir}`,
    // Its log dump runs cluster/log-dump/log-dump.sh of a Kubernetes checkout, which this is not.
    '--disable-log-dump',
    ...o.definitions.map((d) => `-storage.testdriver=${join(o.repoRoot, DEFINITIONS[d].file)}`),
    `-ginkgo.focus=${o.focus}`,
    ...(o.skip === undefined ? [] : [`-ginkgo.skip=${o.skip}`]),
    `-ginkgo.timeout=${ginkgoTimeoutS}s`,
    '-ginkgo.no-color',
    ...(o.dryRun === true ? ['-ginkgo.dry-run'] : []),
  ];
}

/**
 * Run e2e.test and read its report. Failed specs make it exit 1: a result, not an error. A run
 * that hits the time limit throws naming the output file (measured by the time spent, because
 * Ginkgo answers SIGTERM with exit code 1 too), as does one ended by a signal or one that wrote no
 * report.
 */
export async function runStorageSuite(o: SuiteRunOptions): Promise<SuiteRun> {
  await rm(o.dir, { recursive: true, force: true });
  await mkdir(o.dir, { recursive: true });
  const outputFile = join(o.dir, 'e2e.test.log');
  const junitFile = join(o.dir, 'junit_01.xml');
  const args = e2eTestArgs(o);
  const keep = (r: { stdout: string; stderr: string }): Promise<void> =>
    writeFile(outputFile, `e2e.test ${args.join(' ')}\n\n${r.stdout}\n--- stderr ---\n${r.stderr}`);
  const started = Date.now();
  let exitCode: number;
  try {
    const r = await runTool(o.e2eTest, args, { timeoutMs: o.timeoutMs, cwd: o.dir });
    await keep(r);
    exitCode = r.code;
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    await keep(e);
    if (Date.now() - started >= o.timeoutMs)
      throw new Error(`e2e.test did not finish within ${o.timeoutMs / 1000} s (output: ${outputFile})`, { cause: e });
    if (e.code === null) throw new Error(`${e.message.split('\n')[0]} (output: ${outputFile})`, { cause: e });
    exitCode = e.code;
  }
  const ms = Date.now() - started;
  let report: StorageReport;
  try {
    report = readStorageReport(junitFile, o.skips);
  } catch (e) {
    throw new Error(`e2e.test exited with ${exitCode} and wrote no readable ${junitFile} (output: ${outputFile})`, {
      cause: e,
    });
  }
  return { report, exitCode, ms, outputFile, junitFile };
}

/** Linux limits one argument to 128 KiB (MAX_ARG_STRLEN); a shard's focus is one argument. */
export const MAX_ARG_BYTES = 131_072;
const MAX_SHARDS = 6;

/**
 * PMEM_CSI_K8S_STORAGE_SHARDS: how many e2e.test processes share the run, each with its own part of
 * the specs (the suite's specs are parallel-safe apart from [Serial] and [Disruptive], which our skip
 * list leaves out). Default 3 for the full run (one process ran ~3 spec namespaces a minute, most of
 * it waiting on pods), 1 for the curated run (CI's budget is measured with one).
 */
export function shardsFrom(env: NodeJS.ProcessEnv, mode: StorageRunMode): number {
  const v = env['PMEM_CSI_K8S_STORAGE_SHARDS'];
  if (v === undefined || v === '') return mode === 'full' ? 3 : 1;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > MAX_SHARDS)
    throw new Error(
      `PMEM_CSI_K8S_STORAGE_SHARDS=${JSON.stringify(v)} is not a shard count; allowed: an integer from 1 to ${MAX_SHARDS} (default 3 for full, 1 for curated)`,
    );
  return n;
}

/** The specs dealt round-robin into at most `shards` non-empty parts (sorted first: the same specs give the same parts). */
export function dealShards(specs: readonly SpecRef[], shards: number): SpecRef[][] {
  const sorted = [...specs].sort((a, b) => fullSpecText(a).localeCompare(fullSpecText(b)));
  const parts: SpecRef[][] = Array.from({ length: Math.min(shards, sorted.length) }, () => []);
  sorted.forEach((s, i) => parts[i % parts.length]?.push(s));
  return parts;
}

/**
 * One report from the shards' reports: each spec's outcome from the shard that selected it (the
 * others report it unselected), our listed skips once; suite failures and failed suite nodes named
 * by their shard.
 */
export function mergeReports(reports: readonly StorageReport[]): StorageReport {
  const key = (s: StorageSpecResult): string => `${s.definition}\n${s.spec}`;
  const merged = new Map<string, StorageSpecResult>();
  for (const r of reports)
    for (const s of r.specs) {
      const had = merged.get(key(s));
      if (had === undefined || had.outcome === 'unselected') merged.set(key(s), s);
    }
  const named = reports.length > 1;
  const suiteFailure = reports
    .map((r, i) => (r.suiteFailure === undefined ? '' : named ? `shard ${i + 1}: ${r.suiteFailure}` : r.suiteFailure))
    .filter((f) => f !== '')
    .join('; ');
  const otherFailures = reports.flatMap((r, i) =>
    r.otherFailures.map((f) => (named ? { ...f, name: `shard ${i + 1}: ${f.name}` } : f)),
  );
  const specs = [...merged.values()];
  return suiteFailure === '' ? { specs, otherFailures } : { specs, otherFailures, suiteFailure };
}

/**
 * The run split over `shards` concurrent e2e.test processes: a dry run lists the specs the focus
 * and skip select, each shard focuses on its part by exact text, the reports are merged. One shard
 * is runStorageSuite itself.
 */
export async function runStorageSuiteSharded(o: SuiteRunOptions & { readonly shards: number }): Promise<SuiteRun> {
  if (o.shards === 1) return runStorageSuite(o);
  const started = Date.now();
  const dry = await runStorageSuite({ ...o, dir: join(o.dir, 'dry-run'), dryRun: true, timeoutMs: 5 * 60_000 });
  if (dry.exitCode !== 0)
    throw new Error(`the dry run of e2e.test exited with ${dry.exitCode} (output: ${dry.outputFile})`);
  const selected: SpecRef[] = dry.report.specs
    .filter((s) => s.outcome === 'passed')
    .map((s) => ({ definition: s.definition, spec: s.spec }));
  if (selected.length === 0) throw new Error(`the focus selects no spec (dry run: ${dry.outputFile})`);
  const parts = dealShards(selected, o.shards).map((part) => focusExpression(part));
  const long = parts.find((f) => Buffer.byteLength(f) > MAX_ARG_BYTES - 100);
  if (long !== undefined)
    throw new Error(
      `a shard's focus (${Buffer.byteLength(long)} bytes, ${selected.length} specs in ${parts.length} shards) exceeds one argument's ${MAX_ARG_BYTES} bytes: raise PMEM_CSI_K8S_STORAGE_SHARDS`,
    );
  const remaining = o.timeoutMs - (Date.now() - started);
  // Every shard to its end before judging: a shard that failed early must not leave the others running unwatched.
  const settled = await Promise.allSettled(
    parts.map((focus, i) => runStorageSuite({ ...o, focus, dir: join(o.dir, `shard-${i + 1}`), timeoutMs: remaining })),
  );
  const runs: SuiteRun[] = [];
  for (const [i, r] of settled.entries()) {
    if (r.status === 'rejected') {
      const e = r.reason instanceof Error ? r.reason : new Error(String(r.reason));
      throw new Error(`shard ${i + 1} of ${parts.length}: ${e.message}`, { cause: e });
    }
    runs.push(r.value);
  }
  return {
    report: mergeReports(runs.map((r) => r.report)),
    exitCode: Math.max(...runs.map((r) => r.exitCode)),
    ms: Date.now() - started,
    outputFile: runs.map((r) => r.outputFile).join(', '),
    junitFile: runs.map((r) => r.junitFile).join(', '),
  };
}

/**
 * What the counts and the table are about: the selected and the listed specs — or, for a run that
 * focused on `only` (the curated run), those specs alone (our skip list covers specs of the whole
 * suite, most of which the curated focus never selected).
 */
export function countedSpecs(specs: readonly StorageSpecResult[], only?: readonly SpecRef[]): StorageSpecResult[] {
  return specs.filter((s) =>
    only === undefined
      ? s.outcome !== 'unselected'
      : only.some((o) => o.definition === s.definition && o.spec === s.spec),
  );
}

const cell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

/**
 * RESULTS.md of a full run: one row per definition × test pattern × suite with passed / failed /
 * skipped counts, then every failure with its message and every skip reason with the specs it covers.
 */
export function resultsMarkdown(
  specs: readonly StorageSpecResult[],
  meta: { readonly date: string; readonly command: string; readonly minutes: number; readonly kubernetes: string },
): string {
  const counted = countedSpecs(specs);
  const total = countOutcomes(counted);
  const rows = new Map<string, { passed: number; failed: number; skipped: number }>();
  for (const s of counted) {
    const key = [s.definition, s.pattern, s.suite].map(cell).join(' | ');
    const row = rows.get(key) ?? { passed: 0, failed: 0, skipped: 0 };
    if (s.outcome === 'passed') row.passed++;
    else if (s.outcome === 'failed') row.failed++;
    else row.skipped++;
    rows.set(key, row);
  }
  const out = [
    '# External Storage suite: last full run',
    '',
    `Kubernetes ${meta.kubernetes} \`e2e.test\` against PMEM-CSI on the real node (emulated mode), ${meta.date},`,
    `${meta.minutes.toFixed(0)} min: \`${meta.command}\` (written by e2e/src/realnode/k8s-storage.e2e.test.ts; see README.md).`,
    '',
    `**${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped** of ${counted.length} specs.`,
    'Definition `ext4` is `pmem-csi.yaml`, `xfs` is `pmem-csi-xfs.yaml`. Skipped: by the suite itself (a',
    'capability the definitions do not claim, a second node, …; "doesn\'t support xfs" under `ext4` and',
    '"doesn\'t support ext4" under `xfs` are the other definition\'s patterns, which run there) or by our list',
    '(`e2e/src/realnode/k8s-storage-specs.ts`, with the reasons).',
    '',
    '| definition | test pattern | suite | passed | failed | skipped |',
    '|---|---|---|---:|---:|---:|',
    ...[...rows.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, r]) => `| ${k} | ${r.passed} | ${r.failed} | ${r.skipped} |`),
    '',
  ];
  const failed = counted.filter((s) => s.outcome === 'failed');
  out.push('## Failures', '');
  if (failed.length === 0) out.push('None.', '');
  for (const f of failed)
    out.push(
      `- \`${f.definition}\` ${f.spec}`,
      '',
      '  ```',
      ...(f.message ?? '').split('\n').map((l) => `  ${l}`),
      '  ```',
      '',
    );
  out.push('## Skip reasons', '', '| reason | by | specs |', '|---|---|---:|');
  const reasons = new Map<string, number>();
  for (const s of counted.filter((x) => x.outcome === 'skipped' || x.outcome === 'listed')) {
    // The suite's messages name the test's namespace or objects now and then: one row per reason text.
    const key = `${cell(s.message ?? '')} | ${s.outcome === 'listed' ? 'our list' : 'the suite'}`;
    reasons.set(key, (reasons.get(key) ?? 0) + 1);
  }
  for (const [k, n] of [...reasons.entries()].sort((a, b) => b[1] - a[1])) out.push(`| ${k} | ${n} |`);
  out.push('');
  return out.join('\n');
}
