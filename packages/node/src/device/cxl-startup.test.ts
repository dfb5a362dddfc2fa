import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { captureLog, ScriptedRunner, type ScriptedReply } from '@pmem-csi/runtime/testing';
import { prepareCxlRegions } from './cxl-startup.js';

const fixture = (name: string): string => readFileSync(new URL(`./__fixtures__/cxl/${name}`, import.meta.url), 'utf8');
const GiB = 1024 * 1024 * 1024;

const cxlList: ScriptedReply = {
  command: 'cxl',
  args: ['list', '-vvv'],
  exact: true,
  stdout: fixture('cxl-list-vvv-two-devices.json'),
};
const ndctlNone: ScriptedReply = { command: 'ndctl', args: ['list'], stdout: '[]' };
// The two nd regions libnvdimm registers for the assembled CXL regions (recorded in the QEMU guest).
const ndctlTwo: ScriptedReply = { command: 'ndctl', args: ['list'], stdout: fixture('ndctl-list-BRDi-cxl.json') };

function createRegion(memdev: string, decoder: string, region: string): ScriptedReply {
  return {
    command: 'cxl',
    args: ['create-region', '-t', 'pmem', '-m', '-d', decoder, '-w', '1', memdev, '-s', String(4 * GiB)],
    exact: true,
    stdout: JSON.stringify({
      region,
      size: 4 * GiB,
      interleave_ways: 1,
      decode_state: 'commit',
      mappings: [{ position: 0, memdev, decoder: 'd' }],
    }),
  };
}

describe('prepareCxlRegions (the node start-up step, scripted runner)', () => {
  it('off, no cxl tool: runs nothing (a node without CXL devices needs no cxl)', async () => {
    const runner = new ScriptedRunner([], ['ndctl']);
    const { log, lines } = captureLog();
    expect(await prepareCxlRegions({ runner, log }, 'manual')).toBeUndefined();
    expect(runner.calls).toEqual([]);
    expect(lines.map((l) => l['msg'])).toEqual([
      'CXL memory devices not looked for: no cxl tool (--cxl-regions=manual)',
    ]);
  });

  it('off with the cxl tool: lists, creates nothing, reports what assembly would make', async () => {
    const runner = new ScriptedRunner([cxlList]);
    const { log } = captureLog();
    const r = await prepareCxlRegions({ runner, log }, 'manual');
    expect(r?.created).toEqual([]);
    expect(r?.notAllowed.map((p) => p.memdev)).toEqual(['mem0', 'mem1']);
    expect(runner.calls.map((c) => `${c.command} ${c.args[0]}`)).toEqual(['cxl list']);
  });

  it('off: a listing that fails is a warning and the node goes on', async () => {
    const runner = new ScriptedRunner([{ command: 'cxl', args: ['list'], exitCode: 1, stderr: 'cxl: no bus' }]);
    const { log, lines } = captureLog();
    expect(await prepareCxlRegions({ runner, log }, 'manual')).toBeUndefined();
    const warn = lines.find((l) => l['level'] === 'warn');
    expect(warn?.['msg']).toBe('CXL memory devices could not be listed (--cxl-regions=manual: going on without them)');
    expect(String(warn?.['error'])).toContain('cxl: no bus');
  });

  it('assemble: one region per device, then waits until ndctl shows both as CXL pmem regions', async () => {
    const runner = new ScriptedRunner([
      ndctlNone,
      cxlList,
      createRegion('mem0', 'decoder0.1', 'region0'),
      createRegion('mem1', 'decoder0.0', 'region1'),
      ndctlNone, // not registered yet: the step looks again
      ndctlTwo,
    ]);
    const { log, lines } = captureLog();
    const r = await prepareCxlRegions({ runner, log }, 'assemble', { pollMs: 1 });
    expect(r?.created.map((x) => x.region)).toEqual(['region0', 'region1']);
    expect(runner.unused()).toEqual([]);
    const ready = lines.find((l) => l['msg'] === 'CXL pmem regions ready for the device manager');
    expect(ready).toMatchObject({ cxlRegions: 'region0, region1', ndRegions: 'region1,region0' });
  });

  it('assemble: nd regions that never appear fail the start naming the regions and the counts', async () => {
    const runner = new ScriptedRunner([
      ndctlNone,
      cxlList,
      createRegion('mem0', 'decoder0.1', 'region0'),
      createRegion('mem1', 'decoder0.0', 'region1'),
      { ...ndctlNone, repeat: true },
    ]);
    const { log } = captureLog();
    await expect(prepareCxlRegions({ runner, log }, 'assemble', { timeoutMs: 200, pollMs: 5 })).rejects.toThrow(
      '--cxl-regions=assemble: waited 200 ms for libnvdimm to show the nd regions of the assembled CXL regions region0, region1: ndctl lists 0 CXL pmem regions, expected 2',
    );
  });

  it('assemble: nothing to assemble (every device mapped) returns without waiting', async () => {
    const runner = new ScriptedRunner([
      ndctlTwo,
      { command: 'cxl', args: ['list', '-vvv'], exact: true, stdout: fixture('cxl-list-vvv-two-regions.json') },
    ]);
    const { log } = captureLog();
    const r = await prepareCxlRegions({ runner, log }, 'assemble');
    expect(r?.created).toEqual([]);
    expect(r?.skipped.length).toBeGreaterThanOrEqual(2);
    expect(runner.unused()).toEqual([]);
  });

  it('assemble without the cxl tool: refused naming the tool', async () => {
    const runner = new ScriptedRunner([], ['ndctl']);
    const { log } = captureLog();
    await expect(prepareCxlRegions({ runner, log }, 'assemble')).rejects.toThrow(
      '--cxl-regions=assemble needs cxl, not found on this machine (Debian packages: ndctl)',
    );
    expect(runner.calls).toEqual([]);
  });
});
