// The bench's flags: which runs write the committed result (only the full run), and --allow-busy.
import { parseBenchArgs } from './main.js';

const REPO = '/repo';
const COMMITTED = '/repo/e2e/bench/results/bench.json';
const LATEST = '/repo/e2e/bench/results/latest.json';

describe('parseBenchArgs', () => {
  it('the full run writes the committed result; smoke and --only runs write latest.json', () => {
    expect(parseBenchArgs([], REPO)).toEqual({
      smoke: false,
      out: COMMITTED,
      scenarios: ['B1', 'B2', 'B3', 'B4', 'B5'],
      keep: false,
      committed: true,
      allowBusy: false,
    });
    expect(parseBenchArgs(['--soak', '--allow-busy'], REPO)).toMatchObject({
      out: COMMITTED,
      scenarios: ['B1', 'B2', 'B3', 'B4', 'B5', 'B6'],
      committed: true,
      allowBusy: true,
    });
    expect(parseBenchArgs(['--smoke'], REPO)).toMatchObject({ smoke: true, out: LATEST, committed: false });
    expect(parseBenchArgs(['--only', 'b1,B4'], REPO)).toMatchObject({
      scenarios: ['B1', 'B4'],
      out: LATEST,
      committed: false,
    });
    expect(parseBenchArgs(['--smoke', '--out', '/tmp/s.json'], REPO)).toMatchObject({
      out: '/tmp/s.json',
      committed: false,
    });
  });

  it('refuses a smoke or --only run that would overwrite the committed result', () => {
    const message =
      '--out: e2e/bench/results/bench.json is the committed result of the full run (B1-B5); a --smoke or --only run writes elsewhere (default e2e/bench/results/latest.json)';
    expect(() => parseBenchArgs(['--smoke', '--out', COMMITTED], REPO)).toThrow(message);
    expect(() => parseBenchArgs(['--only', 'B1', '--out', COMMITTED], REPO)).toThrow(message);
  });

  it('refuses --allow-busy where nothing is refused', () => {
    expect(() => parseBenchArgs(['--smoke', '--allow-busy'], REPO)).toThrow(
      '--allow-busy applies to the full run that writes e2e/bench/results/bench.json; this run writes e2e/bench/results/latest.json, which is never refused',
    );
    expect(() => parseBenchArgs(['--out', '/repo/x.json', '--allow-busy'], REPO)).toThrow(
      '--allow-busy applies to the full run that writes e2e/bench/results/bench.json; this run writes x.json, which is never refused',
    );
  });

  it('refuses unknown scenarios and an empty --out, naming the flag', () => {
    expect(() => parseBenchArgs(['--only', 'B9'], REPO)).toThrow(
      '--only: "B9" must list some of B1, B2, B3, B4, B5, B6',
    );
    expect(() => parseBenchArgs(['--out', ''], REPO)).toThrow('--out must name a file');
  });
});
