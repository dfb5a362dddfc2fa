// Figures of the benchmarks, their targets (from the performance issue) and the table the bench
// prints and the README shows (tools/gen-perf.ts):
//   figure | Go reference | ours | target | ratio | met? | load (1 min)
// The ratio is ours ÷ the reference (the Go server, or the shell script for B2), or ours ÷ a base
// figure of ours when the target says so (end to end ÷ single hop). Figures are reported, never
// asserted: a missed target is a finding, not a failure.
import type { LoadSpan } from './machine.js';

/** A target: on the ratio (ours ÷ reference or base) or on our absolute figure. */
export type Target =
  | { readonly kind: 'ratio-min' | 'ratio-max'; readonly value: number; readonly of: string }
  | { readonly kind: 'max' | 'min'; readonly value: number };

export interface FigureSpec {
  /** Stable key, e.g. "b1.single-hop.c32.pairs-per-s". */
  readonly id: string;
  readonly scenario: string;
  /** What the row says, e.g. "B1 pairs/s single hop c=32". */
  readonly label: string;
  readonly unit: string;
  /** The reference's figure (Go server or shell script); null when there is none. */
  readonly reference: number | null;
  readonly ours: number | null;
  /** Denominator of the ratio when it is not the reference (e.g. our single-hop figure). */
  readonly base?: number;
  readonly target?: Target;
  readonly note?: string;
}

export interface Figure extends FigureSpec {
  readonly ratio: number | null;
  readonly met: boolean | null;
  readonly targetText: string;
}

const round = (v: number, digits = 3): number => Number(v.toPrecision(digits));

function describe(t: Target | undefined, unit: string): string {
  if (t === undefined) return '—';
  switch (t.kind) {
    case 'ratio-min':
      return `≥ ${t.value}× ${t.of}`;
    case 'ratio-max':
      return `≤ ${t.value}× ${t.of}`;
    case 'max':
      return `≤ ${t.value} ${unit}`;
    case 'min':
      return `≥ ${t.value} ${unit}`;
  }
}

function judge(t: Target | undefined, ours: number | null, ratio: number | null): boolean | null {
  if (t === undefined || ours === null) return null;
  switch (t.kind) {
    case 'ratio-min':
      return ratio === null ? null : ratio >= t.value;
    case 'ratio-max':
      return ratio === null ? null : ratio <= t.value;
    case 'max':
      return ours <= t.value;
    case 'min':
      return ours >= t.value;
  }
}

const measured = (v: number | null | undefined): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? v : null;

/** A figure with its ratio and verdict. */
export function figure(raw: FigureSpec): Figure {
  // A measurement that produced nothing (undefined or NaN from a scenario's record) is shown as "—",
  // never a crash of the whole run after the scenarios (the second bench of 2026-12-03 ended so).
  const spec = { ...raw, ours: measured(raw.ours), reference: measured(raw.reference) };
  const denominator = spec.base ?? spec.reference;
  const ratio = spec.ours === null || denominator === null || denominator === 0 ? null : round(spec.ours / denominator);
  return {
    ...spec,
    reference: spec.reference === null ? null : round(spec.reference, 4),
    ours: spec.ours === null ? null : round(spec.ours, 4),
    ratio,
    met: judge(spec.target, spec.ours, ratio),
    targetText: describe(spec.target, spec.unit),
  };
}

const cell = (v: number | null, unit = ''): string => (v === null ? '—' : `${v}${unit === '' ? '' : ` ${unit}`}`);
const verdict = (m: boolean | null): string => (m === null ? '—' : m ? 'yes' : 'NO');

/** The 1-min load average over a figure's measurement: "start → end", one number for an instant. */
export const formatSpan = (s: LoadSpan | undefined): string =>
  s === undefined ? '—' : s.start === s.end ? String(s.start) : `${s.start} → ${s.end}`;

/** The table as text (columns padded; a markdown-style header line). */
export function renderTable(figures: readonly (Figure & { readonly load?: LoadSpan })[]): string {
  const rows = [
    ['figure', 'Go reference', 'ours', 'target', 'ratio', 'met?', 'load (1 min)'],
    ...figures.map((f) => [
      f.label,
      cell(f.reference, f.unit),
      cell(f.ours, f.unit),
      f.targetText,
      cell(f.ratio),
      verdict(f.met),
      formatSpan(f.load),
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  const line = (r: readonly string[]): string => `| ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(rows[0] ?? []), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join(
    '\n',
  );
}

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) throw new Error('median of no values');
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}
