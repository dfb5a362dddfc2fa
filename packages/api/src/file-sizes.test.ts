// Production files stay small (issue 29 item 5): every .ts under packages/*/src that is not a test,
// generated code, a test kit (a testing/ folder) or a fixture has at most 400 lines. A file over the
// limit fails by name with its length; the count, median, p90 and max of all production files are
// printed so a review sees the trend. Lines are counted as `wc -l` does (newline characters). Here
// beside layers.test.ts for the same reason: the api's tests may read every package's src/, and
// `npm run unit` runs them uncached (a cached `nx test api` would not see a change in another package).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAX_LINES = 400;

/** True for a path (relative to the repository) that counts as production code. */
function isProduction(path: string): boolean {
  return (
    path.endsWith('.ts') &&
    !path.endsWith('.test.ts') &&
    !path.endsWith('.d.ts') &&
    !/\/(generated|testing|__fixtures__)\//.test(path)
  );
}

function walk(dir: string, rel: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? walk(`${dir}/${entry.name}`, `${rel}/${entry.name}`)
      : entry.isFile()
        ? [`${rel}/${entry.name}`]
        : [],
  );
}

function productionFiles(): Map<string, number> {
  const lengths = new Map<string, number>();
  for (const name of readdirSync(`${ROOT}packages`).sort()) {
    if (!existsSync(`${ROOT}packages/${name}/src`)) continue;
    for (const path of walk(`${ROOT}packages/${name}/src`, `packages/${name}/src`).filter(isProduction)) {
      lengths.set(path, readFileSync(`${ROOT}${path}`, 'utf8').split('\n').length - 1);
    }
  }
  return lengths;
}

/** Count, median (mean of the two middle values for an even count), p90 (nearest rank) and max. */
function sizeFigures(lengths: readonly number[]): { count: number; median: number; p90: number; max: number } {
  const sorted = [...lengths].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { count: 0, median: 0, p90: 0, max: 0 };
  const at = (i: number): number => sorted[i] ?? 0;
  const mid = Math.floor(n / 2);
  const median = n % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
  return { count: n, median, p90: at(Math.ceil(0.9 * n) - 1), max: at(n - 1) };
}

describe('production file sizes', () => {
  it('selects production files only', () => {
    expect(isProduction('packages/node/src/device/lvm.ts')).toBe(true);
    expect(isProduction('packages/csi/src/driver-flags.ts')).toBe(true);
    expect(isProduction('packages/node/src/device/lvm.test.ts')).toBe(false);
    expect(isProduction('packages/csi/src/generated/csi/v1/Volume.ts')).toBe(false);
    expect(isProduction('packages/node/src/device/testing/fake-exec.ts')).toBe(false);
    expect(isProduction('packages/node/src/device/__fixtures__/ndctl.ts')).toBe(false);
    expect(isProduction('packages/node/src/device/README.md')).toBe(false);
  });

  it('computes count, median, p90 and max', () => {
    expect(sizeFigures([5, 1, 3])).toEqual({ count: 3, median: 3, p90: 5, max: 5 });
    expect(sizeFigures([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])).toEqual({ count: 10, median: 5.5, p90: 9, max: 10 });
    expect(sizeFigures([])).toEqual({ count: 0, median: 0, p90: 0, max: 0 });
  });

  it(`keeps every production file at most ${MAX_LINES} lines`, () => {
    const lengths = productionFiles();
    const figures = sizeFigures([...lengths.values()]);
    console.log(
      `production .ts files: ${figures.count}, median ${figures.median}, p90 ${figures.p90}, max ${figures.max} lines`,
    );
    expect(figures.count).toBeGreaterThan(100);
    const over = [...lengths]
      .filter(([, lines]) => lines > MAX_LINES)
      .map(([path, lines]) => `${path}: ${lines} lines`);
    expect(over).toEqual([]);
  });
});
