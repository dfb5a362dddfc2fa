// No package of the workspace has an import cycle between its folders (the real imports of each src/,
// tests aside; see testing/folder-cycles.ts). Checked here for every package, because the api is the
// one package every layer test may import and it may read any directory: controller, node, operator
// and driver repeat the check in their own layers.test.ts, the runtime (which may import only the
// csi) and the csi (no folders yet) have it only here. `npm run unit` runs it uncached; a cached
// `nx test api` would not see a change in another package (Nx keys the api's tests on the api's files).
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { folderCycles, folderImports } from './testing/folder-cycles.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCES = [
  ...readdirSync(`${ROOT}packages`)
    .filter((name) => existsSync(`${ROOT}packages/${name}/src`))
    .map((name) => `packages/${name}/src`),
  'e2e/src',
];

describe('folders of every package', () => {
  it('covers the packages of the workspace', () => {
    expect(SOURCES).toEqual(
      expect.arrayContaining(['packages/api/src', 'packages/runtime/src', 'packages/controller/src', 'e2e/src']),
    );
  });

  it.each(SOURCES)('%s has no import cycle between its folders (every import of every file, tests aside)', (src) => {
    expect(folderCycles(folderImports(`${ROOT}${src}`))).toEqual([]);
  });
});
