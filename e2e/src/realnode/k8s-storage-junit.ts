// Reads the JUnit report that e2e.test writes with --report-dir (<dir>/junit_01.xml, Ginkgo v2's
// generator as Kubernetes configures it: a `status` attribute per case, no failure message
// attribute — the failure text is the element's body — and every spec of the binary listed, those
// the focus/skip expressions left out as "skipped" without a reason). Not the csi-sanity reader
// (../conformance/junit.ts): that one reads message attributes, which this report omits.
import { readFileSync } from 'node:fs';
import { DEFINITIONS, skipFor, specPrefix, type Definition, type StorageSkip } from './k8s-storage-specs.js';

/** What became of one spec of our driver. */
export type SpecOutcome =
  | 'passed'
  | 'failed'
  /** Skipped by the suite itself at run time (its message says why). */
  | 'skipped'
  /** Left out by our skip list (k8s-storage-specs.ts; the reason is there). */
  | 'listed'
  /** Not selected by the focus (the curated run) and not on the skip list. */
  | 'unselected';

export interface StorageSpecResult {
  readonly definition: Definition;
  /** "[Testpattern: …]" as the suite names it, e.g. "Dynamic PV (default fs)(allowExpansion)". */
  readonly pattern: string;
  /** The test suite: provisioning, volumes, volume-expand, … */
  readonly suite: string;
  /** The spec text after the prefix: "[Testpattern: …] <suite> <test>". */
  readonly spec: string;
  readonly outcome: SpecOutcome;
  /** Failure text (first lines) or the suite's skip message or our skip reason. */
  readonly message?: string;
  readonly seconds: number;
}

/** A case that is not a spec of our driver but failed: suite set-up and tear-down nodes. */
export interface OtherFailure {
  readonly name: string;
  readonly message: string;
}

export interface StorageReport {
  readonly specs: readonly StorageSpecResult[];
  readonly otherFailures: readonly OtherFailure[];
  /**
   * Why the suite as a whole failed, when Ginkgo says so (property SpecialSuiteFailureReason, e.g.
   * "Suite Timeout Elapsed", "Interrupted by User"): the specs after that point were not run and
   * are reported as skipped without a reason, like the unselected ones.
   */
  readonly suiteFailure?: string;
}

const ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML character references and the five predefined entities, decoded. */
export function decodeXml(s: string): string {
  return s.replace(
    /&(?:#x([0-9a-fA-F]+)|#(\d+)|(lt|gt|amp|quot|apos));/g,
    (m, hex?: string, dec?: string, name?: string) => {
      if (hex !== undefined) return String.fromCodePoint(parseInt(hex, 16));
      if (dec !== undefined) return String.fromCodePoint(Number(dec));
      return ENTITIES[name ?? ''] ?? m;
    },
  );
}

const attr = (attrs: string, name: string): string | undefined => {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(attrs);
  return m?.[1] === undefined ? undefined : decodeXml(m[1]);
};

/** The failure text without Ginkgo's timeline: up to the first blank line after the "[FAILED]" line, at most 12 lines. */
export function failureSummary(body: string): string {
  const lines = decodeXml(body.replace(/^<!\[CDATA\[|\]\]>$/g, '')).split('\n');
  const start = Math.max(
    0,
    lines.findIndex((l) => /\[(FAILED|PANICKED|TIMEDOUT|INTERRUPTED)\]/.test(l)),
  );
  const out: string[] = [];
  for (const l of lines.slice(start)) {
    if (l.trim() === '' && out.length > 0) break;
    if (l.trim() !== '') out.push(l.trim());
    if (out.length === 12) break;
  }
  return out.join('\n');
}

interface RawCase {
  readonly name: string;
  readonly status: string;
  readonly seconds: number;
  readonly skipMessage?: string;
  readonly failure?: string;
}

function rawCases(xml: string): RawCase[] {
  const cases: RawCase[] = [];
  const re = /<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g;
  for (let m = re.exec(xml); m !== null; m = re.exec(xml)) {
    const attrs = m[1] ?? '';
    const body = m[2] ?? '';
    const skipped = /<skipped\b([^>]*?)\/?>/.exec(body);
    const failure = /<(failure|error)\b[^>]*?(?:\/>|>([\s\S]*?)<\/\1>)/.exec(body);
    cases.push({
      name: (attr(attrs, 'name') ?? '').replace(/^\[It\] /, ''),
      status: attr(attrs, 'status') ?? (failure ? 'failed' : skipped ? 'skipped' : 'passed'),
      seconds: Number(attr(attrs, 'time') ?? 0),
      ...(skipped ? { skipMessage: attr(skipped[1] ?? '', 'message') ?? '' } : {}),
      ...(failure ? { failure: failureSummary(failure[2] ?? '') } : {}),
    });
  }
  return cases;
}

/** Which definition a full spec text belongs to, and the text after its prefix; undefined for other specs. */
export function splitSpec(fullText: string): { definition: Definition; spec: string } | undefined {
  // The tagged definition first: its prefix extends the untagged one's.
  const defs = (Object.keys(DEFINITIONS) as Definition[]).sort(
    (a, b) => DEFINITIONS[b].tag.length - DEFINITIONS[a].tag.length,
  );
  for (const definition of defs) {
    const prefix = `${specPrefix(definition)} `;
    if (fullText.startsWith(prefix)) return { definition, spec: fullText.slice(prefix.length) };
  }
  return undefined;
}

/** "[Testpattern: P] [tags] suite test" -> P and suite. */
export function patternAndSuite(spec: string): { pattern: string; suite: string } {
  const m = /^\[Testpattern: (.*?)\](?: \[[^\]]*\])* (\S+)/.exec(spec);
  return { pattern: m?.[1] ?? '?', suite: m?.[2] ?? '?' };
}

const FAILED_STATES = new Set(['failed', 'panicked', 'timedout', 'interrupted', 'aborted']);

/** Parse the report; `skips` tells our listed skips apart from specs the focus left out. */
export function parseStorageReport(xml: string, skips: readonly StorageSkip[]): StorageReport {
  const special = /<property name="SpecialSuiteFailureReason" value="([^"]*)"/.exec(xml)?.[1];
  const suiteFailure = special === undefined ? '' : decodeXml(special).trim();
  const specs: StorageSpecResult[] = [];
  const otherFailures: OtherFailure[] = [];
  for (const c of rawCases(xml)) {
    const split = splitSpec(c.name);
    const failed = FAILED_STATES.has(c.status);
    if (split === undefined) {
      if (failed) otherFailures.push({ name: c.name, message: c.failure ?? c.status });
      continue;
    }
    const base = { ...split, ...patternAndSuite(split.spec), seconds: c.seconds };
    if (failed) {
      specs.push({ ...base, outcome: 'failed', message: c.failure ?? c.status });
    } else if (c.status === 'skipped' || c.skipMessage !== undefined) {
      // Ginkgo writes "skipped - <reason>" for a Skip() at run time and a bare "skipped" for a filtered spec.
      const reason = (c.skipMessage ?? '').replace(/^skipped( - )?/, '').trim();
      if (reason !== '') specs.push({ ...base, outcome: 'skipped', message: reason });
      else {
        const listed = skipFor(skips, c.name);
        specs.push(listed ? { ...base, outcome: 'listed', message: listed.why } : { ...base, outcome: 'unselected' });
      }
    } else if (c.status === 'pending') {
      specs.push({ ...base, outcome: 'unselected' });
    } else {
      specs.push({ ...base, outcome: 'passed' });
    }
  }
  return suiteFailure === '' ? { specs, otherFailures } : { specs, otherFailures, suiteFailure };
}

export function readStorageReport(file: string, skips: readonly StorageSkip[]): StorageReport {
  return parseStorageReport(readFileSync(file, 'utf8'), skips);
}

/** passed / failed / skipped (by the suite or by our list) among the specs the run selected or listed. */
export function countOutcomes(specs: readonly StorageSpecResult[]): {
  passed: number;
  failed: number;
  skipped: number;
} {
  const n = (o: SpecOutcome): number => specs.filter((s) => s.outcome === o).length;
  return { passed: n('passed'), failed: n('failed'), skipped: n('skipped') + n('listed') };
}

/** The tier's own summary line. */
export function summaryLine(specs: readonly StorageSpecResult[]): string {
  const c = countOutcomes(specs);
  return `k8s-storage: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;
}
