// The driver image installs every host tool the node driver runs, in every device mode:
// nodeTools(mode) of @pmem-csi/node -> Debian package (TOOL_PACKAGES of @pmem-csi/runtime) ->
// the apt-get line of deploy/images/driver.Dockerfile. (Pure; it lives here because only e2e may
// import both the node package and the deploy files' owner, the operator.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VOLUME_DEVICE_MODES } from '@pmem-csi/api';
import { nodeTools } from '@pmem-csi/node/testing';
import { TOOL_PACKAGES } from '@pmem-csi/runtime';
import { REPO_ROOT } from './render.js';

function aptPackages(dockerfile: string): string[] {
  const line = dockerfile.replace(/\\\n/g, ' ').split('\n').find((l) => l.includes('apt-get install')) ?? '';
  return (line.split('apt-get install')[1]?.split('&&')[0] ?? '').trim().split(/\s+/).filter((w) => w !== '' && !w.startsWith('-'));
}

const installed = aptPackages(readFileSync(join(REPO_ROOT, 'deploy/images/driver.Dockerfile'), 'utf8'));

describe('driver image', () => {
  for (const mode of VOLUME_DEVICE_MODES) {
    it(`has every tool of device mode ${mode}`, () => {
      const tools = nodeTools(mode);
      expect(tools.filter((t) => TOOL_PACKAGES[t] === undefined)).toEqual([]);
      const missing = tools.filter((t) => !installed.includes(TOOL_PACKAGES[t] ?? '')).map((t) => `${t} (Debian package ${TOOL_PACKAGES[t] ?? '?'})`);
      expect(missing).toEqual([]);
    });
  }

  it('installs the packages with an apt-get line that the check can read', () => {
    expect(installed).toEqual(expect.arrayContaining(['ndctl', 'lvm2', 'e2fsprogs', 'xfsprogs', 'util-linux', 'mount']));
  });
});
