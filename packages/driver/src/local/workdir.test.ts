// Where the local stack lives: --state-dir, else $PMEM_CSI_LOCAL_DIR, else <tmpdir>/pmem-csi-local;
// a relative directory counts from where the user ran npm (INIT_CWD), not the repository root.
import { afterEach, describe, expect, it } from '@jest/globals';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localStackDir, STATE_DIR_ENV } from './workdir.js';

const saved = { env: process.env[STATE_DIR_ENV], init: process.env['INIT_CWD'] };
afterEach(() => {
  for (const [k, v] of [
    [STATE_DIR_ENV, saved.env],
    ['INIT_CWD', saved.init],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe('localStackDir', () => {
  it('the flag wins over the environment, which wins over the default', () => {
    delete process.env[STATE_DIR_ENV];
    expect(localStackDir()).toBe(join(tmpdir(), 'pmem-csi-local'));
    process.env[STATE_DIR_ENV] = '/srv/env-dir';
    expect(localStackDir()).toBe('/srv/env-dir');
    expect(localStackDir('/srv/flag-dir')).toBe('/srv/flag-dir');
    process.env[STATE_DIR_ENV] = '';
    expect(localStackDir()).toBe(join(tmpdir(), 'pmem-csi-local'));
  });

  it('a relative directory is taken from where npm was run (INIT_CWD), else the working directory', () => {
    process.env['INIT_CWD'] = '/home/dev/project';
    expect(localStackDir('stack')).toBe('/home/dev/project/stack');
    delete process.env['INIT_CWD'];
    expect(localStackDir('stack')).toBe(join(process.cwd(), 'stack'));
  });
});
