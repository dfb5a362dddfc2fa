// The closing hints of the local stack: the sockets and `npm run status` only while the stack
// stays up (--keep); otherwise one line that points to --keep, repeating the user's options.
import { describe, expect, it } from '@jest/globals';
import { keepCommand, keepHints, tornDownHint } from './hints.js';

const stack = {
  dir: '/tmp/pmem-csi-local',
  controllerSocket: '/tmp/pmem-csi-local/controller/csi.sock',
  statusUrl: 'http://127.0.0.1:24000',
  nodes: [
    { id: 'node-a', socket: '/tmp/pmem-csi-local/nodes/node-a/csi.sock' },
    { id: 'node-b', socket: '/tmp/pmem-csi-local/nodes/node-b/csi.sock' },
  ],
};

describe('local stack hints', () => {
  it('with --keep: every socket, the status URL, the logs and how to stop', () => {
    expect(keepHints(stack)).toEqual([
      '',
      'CSI sockets (point csi-sanity or any CSI client at them):',
      '   controller: unix:///tmp/pmem-csi-local/controller/csi.sock',
      '   node-a:     unix:///tmp/pmem-csi-local/nodes/node-a/csi.sock',
      '   node-b:     unix:///tmp/pmem-csi-local/nodes/node-b/csi.sock',
      '   status:     http://127.0.0.1:24000/status   (or: npm run status)',
      '   logs:       /tmp/pmem-csi-local/logs/',
      '',
      'The stack keeps running; Ctrl-C (or SIGTERM) stops it.',
    ]);
  });

  it('without --keep: one line pointing to --keep, no socket', () => {
    const line = tornDownHint({ keep: false, fake: false, stateDir: undefined }, '/tmp/pmem-csi-local');
    expect(line).toBe(
      'the stack is torn down now (its logs stay in /tmp/pmem-csi-local/logs/); run `npm start -- --keep` to keep it up and get the sockets',
    );
    expect(line).not.toContain('unix://');
  });

  it('repeats --fake and --state-dir, quoting a directory the shell would split', () => {
    expect(keepCommand({ keep: false, fake: true, stateDir: 'run/one' })).toBe(
      'npm start -- --keep --fake --state-dir run/one',
    );
    expect(keepCommand({ keep: false, fake: false, stateDir: "/tmp/my stack's dir" })).toBe(
      `npm start -- --keep --state-dir '/tmp/my stack'\\''s dir'`,
    );
  });
});
