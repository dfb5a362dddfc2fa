// The local stack reports its waits: registrationWait names what the registration wait still
// waits for, and a real stack on fake devices (child processes, no root needed) prints progress
// lines through the `progress` option while it registers and stops — with a 100 ms interval here,
// so that the test does not depend on how slow the machine is.
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControllerStatus, NodeState } from '@pmem-csi/controller';
import { createLogger } from '@pmem-csi/runtime';
import { createProgress } from './progress.js';
import { READY_TIMEOUT_MS, registrationWait, startLocalStack } from './stack.js';

function status(states: Record<string, NodeState>, settled: boolean): ControllerStatus {
  return {
    driverName: 'pmem-csi.intel.com',
    startedAt: '2025-01-01T00:00:00Z',
    settled,
    volumes: 0,
    nodes: Object.entries(states).map(([nodeId, state]) => ({
      nodeId,
      state,
      endpoint: '127.0.0.1:1',
      deviceMode: 'fake',
      version: 'v0',
      capacity: { total: 0, available: 0, maxVolumeSize: 0, managed: 0 },
      volumes: 0,
      registeredAt: '2025-01-01T00:00:00Z',
    })),
  };
}

describe('registrationWait', () => {
  const ids = ['node-a', 'node-b', 'node-c'];

  it('before the controller answers: the processes to start', () => {
    expect(registrationWait(undefined, ids)).toBe('the controller and 3 node drivers to start');
  });

  it('names the nodes not yet available, in the stack order', () => {
    expect(registrationWait(status({}, false), ids)).toBe('node-a, node-b, node-c to register with the controller');
    expect(registrationWait(status({ 'node-b': 'available', 'node-c': 'unavailable' }, false), ids)).toBe(
      'node-a, node-c to register with the controller',
    );
  });

  it('once all are available: the settle period', () => {
    expect(
      registrationWait(status({ 'node-a': 'available', 'node-b': 'available', 'node-c': 'available' }, false), ids),
    ).toBe("the controller's start-up settle period to pass (no node's volumes missed after a restart)");
  });
});

describe('startLocalStack with progress', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmem-local-progress-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints what the start-up and the stop wait for, with the limits', async () => {
    const lines: string[] = [];
    const stack = await startLocalStack(join(dir, 'stack'), 'fake', createLogger({ level: 'warn' }), {
      nodeSizes: [
        ['node-a', 64 * 1024 ** 2],
        ['node-b', 64 * 1024 ** 2],
      ],
      progress: createProgress((l) => lines.push(l), 100),
    });
    const started = lines.length;
    await stack.stop();
    const limit = `up to ${READY_TIMEOUT_MS / 1000} s`;
    const registration = lines.slice(0, started).filter((l) => l.startsWith('waiting for ') && l.includes(limit));
    // Starting the node processes takes longer than 100 ms on any machine: at least one line.
    expect(registration.length).toBeGreaterThan(0);
    for (const l of registration)
      expect(l).toMatch(
        /^waiting for (the controller and 2 node drivers to start|(node-a, node-b|node-a|node-b) to register with the controller|the controller's start-up settle period to pass \(no node's volumes missed after a restart\)) \(\d+ s, up to 90 s\)…$/,
      );
    // Whatever the stop waited for, it was named with its limit (SIGTERM grace) or as the release.
    for (const l of lines.slice(started))
      expect(l).toMatch(
        /^waiting for ((node-a, node-b|node-a|node-b|controller|the processes) to stop after SIGTERM \(SIGKILL when the time is up\) \(\d+ s, up to 15 s\)|the mounts and loop devices below .* to be released \(\d+ s\))…$/,
      );
  }, 120_000);
});
