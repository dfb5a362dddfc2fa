// The V8 flags the driver sets on itself per mode (v8-mode-flags.ts): which mode a command line
// asks for, what is set for it, and — in a child process traced with --trace-opt — that the node
// mode's flags really keep V8's Maglev compiler out while the controller's leave it in.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { applyModeV8Flags, DRIVER_V8_RUNTIME_FLAGS, modeOf } from './v8-mode-flags.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PROBE = fileURLToPath(new URL('./__fixtures__/tier-probe.ts', import.meta.url));

describe('modeOf', () => {
  it('reads --mode VALUE and --mode=VALUE; the last one wins, as the flag parser takes it', () => {
    expect(modeOf(['--mode', 'node'])).toBe('node');
    expect(modeOf(['--nodeid=n1', '--mode=controller'])).toBe('controller');
    expect(modeOf(['--mode=node', '--mode', 'controller'])).toBe('controller');
  });

  it('is undefined without a mode, with a value that is no mode, a missing value, or after --', () => {
    expect(modeOf([])).toBeUndefined();
    expect(modeOf(['--help'])).toBeUndefined();
    expect(modeOf(['--mode=Node'])).toBeUndefined();
    expect(modeOf(['--mode'])).toBeUndefined();
    expect(modeOf(['--', '--mode=node'])).toBeUndefined();
    expect(modeOf(['local', '--state-dir', '/tmp/x'])).toBeUndefined();
  });
});

describe('applyModeV8Flags', () => {
  const applied = (argv: string[]): string[] => {
    const set: string[] = [];
    expect(applyModeV8Flags(argv, (f) => set.push(f))).toEqual(set);
    return set;
  };

  it("sets each mode's flags and nothing without a mode", () => {
    expect(applied(['--mode=node'])).toEqual(['--no-maglev']);
    expect(applied(['--mode=controller'])).toEqual([]);
    expect(applied(['--version'])).toEqual([]);
  });

  it('holds only flags that Node.js refuses in NODE_OPTIONS (the others belong in DRIVER_V8_OPTIONS)', () => {
    for (const flag of Object.values(DRIVER_V8_RUNTIME_FLAGS).flat()) {
      const run = spawnSync(process.execPath, ['-e', '0'], {
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: flag },
        timeout: 30_000,
      });
      expect([flag, run.stderr]).toEqual([flag, expect.stringContaining(`${flag} is not allowed in NODE_OPTIONS`)]);
    }
  });
});

describe('in a traced process', () => {
  /** The compilers the trace names for the probe's hot function. */
  function targets(mode: string): string[] {
    const run = spawnSync(
      process.execPath,
      ['--trace-opt', '--conditions=@pmem-csi/source', '--import', 'tsx', PROBE, `--mode=${mode}`],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    expect([run.status, run.stderr]).toEqual([0, '']);
    const lines = run.stdout.split('\n').filter((l) => l.includes('<JSFunction tierProbeHot'));
    return [...new Set(lines.flatMap((l) => [...l.matchAll(/\(target (\w+)\)/g)].map((m) => m[1] ?? '')))];
  }

  it('the node mode optimises with TurboFan only; the controller uses Maglev (V8 default)', () => {
    expect(targets('node')).toEqual(['TURBOFAN_JS']);
    expect(targets('controller')).toContain('MAGLEV');
  }, 120_000);
});
