import { describe, expect, it } from '@jest/globals';
import { CommandFailedError, type CommandRunner, type RunResult } from '@pmem-csi/runtime';
import { NodeMetrics } from './metrics.js';

/** A runner that answers every command after `ms`, failing the ones named in `failing`. */
function slowRunner(ms: number, failing: readonly string[] = []): CommandRunner & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    run: async (command, args): Promise<RunResult> => {
      calls.push(command);
      await new Promise((r) => setTimeout(r, ms));
      if (failing.includes(command)) throw new CommandFailedError(`${command} failed`, command, 1, 'boom');
      return { command, args, exitCode: 0, stdout: '', stderr: '', durationMs: ms };
    },
    which: (tool) => `/usr/sbin/${tool}`,
  };
}

async function count(m: NodeMetrics, labels: Record<string, string>): Promise<number | undefined> {
  const values = (await m.deviceOperations.get()).values;
  return values.find(
    (v) =>
      v.metricName === 'pmem_csi_node_device_operation_seconds_count' &&
      Object.entries(labels).every(([k, x]) => (v.labels as Record<string, string | number | undefined>)[k] === x),
  )?.value;
}

describe('NodeMetrics.meterRunner', () => {
  it('times mkfs.* by result and passes every other command through untimed', async () => {
    const m = new NodeMetrics('n1');
    const inner = slowRunner(30, ['mkfs.xfs']);
    const runner = m.meterRunner(inner);
    await runner.run('mkfs.ext4', ['-F', '/dev/x']);
    await runner.run('/usr/sbin/mkfs.ext4', ['-F', '/dev/x']);
    await expect(runner.run('mkfs.xfs', ['-f', '/dev/x'])).rejects.toThrow('mkfs.xfs failed');
    await runner.run('blkid', ['/dev/x']);
    expect(inner.calls).toEqual(['mkfs.ext4', '/usr/sbin/mkfs.ext4', 'mkfs.xfs', 'blkid']);
    expect(runner.which('blkid')).toBe('/usr/sbin/blkid');
    expect(await count(m, { operation: 'mkfs', result: 'ok' })).toBe(2);
    expect(await count(m, { operation: 'mkfs', result: 'error' })).toBe(1);
    const sum =
      (await m.deviceOperations.get()).values.find(
        (v) => v.metricName === 'pmem_csi_node_device_operation_seconds_sum' && v.labels['result'] === 'ok',
      )?.value ?? 0;
    expect(sum).toBeGreaterThanOrEqual(0.05); // two 30 ms runs
    expect((await m.deviceOperations.get()).values.some((v) => v.labels['operation'] === 'blkid')).toBe(false);
  });

  it('refuses an empty node id', () => {
    expect(() => new NodeMetrics('')).toThrow('nodeId must not be empty');
  });
});
