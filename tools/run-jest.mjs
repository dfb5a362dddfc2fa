#!/usr/bin/env node
// Runs Jest (ESM mode) and closes with the plain line "<label>: N passed, N failed[, N skipped]",
// read from Jest's JSON result, so any CI can count the tests. Exit code is Jest's.
// Usage: node tools/run-jest.mjs <label> [jest args...]
// Jest runs on the pinned Node.js (node_modules/.bin/node, see tools/check-node.mjs) also when
// this script was started by another node, e.g. `node tools/run-jest.mjs one <file>` in a shell
// whose node is the machine's; that bin directory goes first on PATH for what the tests start by name.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

const [label = 'unit', ...args] = process.argv.slice(2);
mkdirSync('tmp', { recursive: true });
const out = join('tmp', `jest-${label}.json`);
rmSync(out, { force: true });
const bin = resolve('node_modules/.bin');
const node = existsSync(join(bin, 'node')) ? join(bin, 'node') : process.execPath;
const res = spawnSync(
  node,
  [
    '--experimental-vm-modules',
    '--no-warnings=ExperimentalWarning',
    'node_modules/jest/bin/jest.js',
    '--json',
    `--outputFile=${out}`,
    ...args,
  ],
  { stdio: 'inherit', env: { ...process.env, PATH: [bin, process.env.PATH].filter(Boolean).join(delimiter) } },
);
let line = `${label}: no result (jest exited with ${res.status ?? res.signal})`;
let code = res.status ?? 1;
try {
  const r = JSON.parse(readFileSync(out, 'utf8'));
  const failed = r.numFailedTests + r.numRuntimeErrorTestSuites;
  const skipped = r.numPendingTests + r.numTodoTests;
  line = `${label}: ${r.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
  if (r.numTotalTests === 0) {
    line += ' (no tests ran)';
    code = 1;
  }
} catch {
  code = code || 1;
}
process.stdout.write(`\n${line}\n`);
process.exit(code);
