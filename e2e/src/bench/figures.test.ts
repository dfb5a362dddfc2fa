// The bench's table (printed by every run, and the README's Performance table): one row per
// figure with its verdict and the 1-min load average over its measurement.
import { figure, formatSpan, renderTable } from './figures.js';

describe('renderTable', () => {
  it('prints the load average beside every figure: start → end, one number for an instant, — when unknown', () => {
    const rows = [
      {
        ...figure({
          id: 'a',
          scenario: 'B1',
          label: 'B1 pairs/s c=32',
          unit: '/s',
          reference: 8606,
          ours: 1723,
          target: { kind: 'ratio-min', value: 0.5, of: 'Go' },
        }),
        load: { start: 0.41, end: 2.87 },
      },
      {
        ...figure({
          id: 'b',
          scenario: 'B3',
          label: 'B3 RSS',
          unit: 'MiB',
          reference: null,
          ours: 63.25,
          target: { kind: 'max', value: 70 },
        }),
        load: { start: 0.35, end: 0.35 },
      },
      figure({ id: 'c', scenario: 'B5', label: 'B5 stall', unit: 'ms', reference: null, ours: null }),
    ];
    expect(renderTable(rows)).toBe(
      [
        '| figure          | Go reference | ours      | target    | ratio | met? | load (1 min) |',
        '|-----------------|--------------|-----------|-----------|-------|------|--------------|',
        '| B1 pairs/s c=32 | 8606 /s      | 1723 /s   | ≥ 0.5× Go | 0.2   | NO   | 0.41 → 2.87  |',
        '| B3 RSS          | —            | 63.25 MiB | ≤ 70 MiB  | —     | yes  | 0.35         |',
        '| B5 stall        | —            | —         | —         | —     | —    | —            |',
      ].join('\n'),
    );
  });

  it('formats a load span', () => {
    expect([formatSpan({ start: 1, end: 2.5 }), formatSpan({ start: 0.3, end: 0.3 }), formatSpan(undefined)]).toEqual([
      '1 → 2.5',
      '0.3',
      '—',
    ]);
  });
});

describe('figure', () => {
  it('a measurement that produced nothing (undefined, NaN) is no figure ("—") and no verdict, not a crash', () => {
    const spec = {
      id: 'b4.n5000.renewal-p99-ms',
      scenario: 'B4',
      label: 'B4 5000 nodes: renewal p99',
      unit: 'ms',
      reference: null,
      target: { kind: 'max', value: 20 },
    } as const;
    for (const ours of [undefined as unknown as number, Number.NaN]) {
      const f = figure({ ...spec, ours });
      expect([f.ours, f.ratio, f.met]).toEqual([null, null, null]);
    }
    expect(figure({ ...spec, ours: 12.34567 }).ours).toBe(12.35);
  });
});
