// The folders of @pmem-csi/driver (local/, the local stack) and its top-level files import each other
// in one direction only: no folder cycle (the real imports of src/, tests aside).
import { packageDir } from '@pmem-csi/api/testing/lint';
import { folderCycles, folderImports } from '@pmem-csi/api/testing/folders';

describe('layers inside @pmem-csi/driver', () => {
  it('has no import cycle between its folders (every import of every file in src/, tests aside)', () => {
    expect(folderCycles(folderImports(`${packageDir('driver')}src`))).toEqual([]);
  });
});
