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
  return s.replace(/&(lt|gt|amp|quot|apos);|&#(\d+);|&#x([0-9a-fA-F]+);/g, (m, _n, dec: string | undefined, hex: string | undefined) => {
    if (dec !== undefined) return String.fromCodePoint(Number(dec));
    if (hex !== undefined) return String.fromCodePoint(parseInt(hex, 16));
    return ENTITIES[m] ?? m;
  });
}

function classify(body: string): Pick<JUnitCase, 'status' | 'message'> {
  const failure = /<(failure|error)\b([^>]*)>/.exec(body);
  if (failure) {
    const msg = /message="([^"]*)"/.exec(failure[2] ?? '');
    return { status: 'failed', message: unescape(msg?.[1] ?? '') };
  }
  if (/<skipped\b/.test(body)) return { status: 'skipped' };
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

/** Parse a JUnit XML file. */
export function readJUnit(path: string): JUnitSummary {
  return parseJUnit(readFileSync(path, 'utf8'));
}
