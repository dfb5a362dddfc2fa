// The folders of @pmem-csi/api (crd/, validation/, generated/, testing/) and its top-level modules
// import each other in one direction only: no folder cycle (the real imports of src/, tests aside).
import { fileURLToPath } from 'node:url';
import { folderCycles, folderImports } from './testing/folder-cycles.js';

describe('layers inside @pmem-csi/api', () => {
  it('has no import cycle between its folders (every import of every file in src/, tests aside)', () => {
    expect(folderCycles(folderImports(fileURLToPath(new URL('./', import.meta.url))))).toEqual([]);
  });
});
