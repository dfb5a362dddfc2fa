// Reads a JUnit XML report (as csi-sanity writes it through Ginkgo) into counts and failed names,
// so the harness can print "N passed, N failed" — Ginkgo's console output is not a count CI reads.
import { readFileSync } from 'node:fs';

export interface JUnitCase {
  readonly name: string;
  readonly status: 'passed' | 'failed' | 'skipped';
  readonly message?: string;
}

export interface JUnitSummary {
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly cases: readonly JUnitCase[];
}

const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&amp;': '&', '&quot;': '"', '&apos;': "'" };

function unescape(s: string): string {
  return s.replace(
    /&(lt|gt|amp|quot|apos);|&#(\d+);|&#x([0-9a-fA-F]+);/g,
    (m, _n, dec: string | undefined, hex: string | undefined) => {
      if (dec !== undefined) return String.fromCodePoint(Number(dec));
      if (hex !== undefined) return String.fromCodePoint(parseInt(hex, 16));
      return ENTITIES[m] ?? m;
    },
  );
}

function classify(body: string): Pick<JUnitCase, 'status' | 'message'> {
  const failure = /<(failure|error)\b([^>]*)>/.exec(body);
  if (failure) {
    const msg = /message="([^"]*)"/.exec(failure[2] ?? '');
    return { status: 'failed', message: unescape(msg?.[1] ?? '') };
  }
  const skipped = /<skipped\b([^>]*)>/.exec(body);
  if (skipped) {
    const msg = /message="([^"]*)"/.exec(skipped[1] ?? '');
    return msg === null ? { status: 'skipped' } : { status: 'skipped', message: unescape(msg[1] ?? '') };
  }
  return { status: 'passed' };
}

/** Parse JUnit XML text. */
export function parseJUnit(xml: string): JUnitSummary {
  const cases: JUnitCase[] = [];
  const re = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (let m = re.exec(xml); m !== null; m = re.exec(xml)) {
    const name = unescape(/\bname="([^"]*)"/.exec(m[1] ?? '')?.[1] ?? '');
    cases.push({ name, ...classify(m[3] ?? '') });
  }
  const count = (s: JUnitCase['status']): number => cases.filter((c) => c.status === s).length;
  return { passed: count('passed'), failed: count('failed'), skipped: count('skipped'), cases };
}

/** The outcome of one spec, found by its full text (Ginkgo prefixes "[It] " to the case name). */
export interface SpecOutcome {
  readonly spec: string;
  /** 'missing' when the report has no case with this text. */
  readonly status: JUnitCase['status'] | 'missing';
  readonly message?: string;
}

/** Look up the outcome of each of `specs` in the report, by exact spec text. */
export function outcomesOf(summary: JUnitSummary, specs: readonly string[]): SpecOutcome[] {
  return specs.map((spec) => {
    const c = summary.cases.find((k) => k.name === spec || k.name === `[It] ${spec}`);
    if (c === undefined) return { spec, status: 'missing' };
    return c.message === undefined ? { spec, status: c.status } : { spec, status: c.status, message: c.message };
  });
}

/** Parse a JUnit XML file. */
export function readJUnit(path: string): JUnitSummary {
  return parseJUnit(readFileSync(path, 'utf8'));
}
