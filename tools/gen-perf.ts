// Generates the README's Performance table from the committed full run of the bench:
//   e2e/bench/results/bench.json  ->  README.md, between the performance table markers
// Usage: npx tsx tools/gen-perf.ts           rewrite the block
//        npx tsx tools/gen-perf.ts --check   exit 1 naming README.md when the block is stale
//        ... --root DIR                      read/write under DIR instead of the workspace (tests)
// Without a committed result the block says so; it never shows figures of another run.
// The renderer is e2e/src/bench/readme.ts (the bench's own table code, so the README and the
// printed table cannot differ).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { README_FILE, performanceReadme } from '../e2e/src/bench/readme.js';
import { COMMITTED_RESULT } from '../e2e/src/bench/result.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const USAGE = 'usage: npx tsx tools/gen-perf.ts [--check] [--root DIR]\n';

async function main(check: boolean, root: string): Promise<number> {
  let readme: { current: string; wanted: string };
  try {
    readme = await performanceReadme(root);
  } catch (e) {
    process.stderr.write(`gen-perf: ${(e as Error).message}\n`);
    return 1;
  }
  if (readme.current === readme.wanted) {
    process.stdout.write(`gen-perf: ${README_FILE} Performance table is up to date\n`);
    return 0;
  }
  if (check) {
    process.stderr.write(
      `gen-perf: stale generated block in ${README_FILE} (the Performance table, from ${COMMITTED_RESULT})\n` +
        '  regenerate with: npx tsx tools/gen-perf.ts\n',
    );
    return 1;
  }
  await writeFile(join(root, README_FILE), readme.wanted);
  process.stdout.write(`gen-perf: wrote the Performance table of ${README_FILE}\n`);
  return 0;
}

function parseArgs(args: readonly string[]): { check: boolean; root: string } | undefined {
  let check = false;
  let root = ROOT;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--check') check = true;
    else if (args[i] === '--root' && args[i + 1] !== undefined) root = args[++i] ?? ROOT;
    else return undefined;
  }
  return { check, root };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const options = parseArgs(process.argv.slice(2));
  if (options === undefined) {
    process.stderr.write(USAGE);
    process.exitCode = 2;
  } else {
    process.exitCode = await main(options.check, options.root);
  }
}
