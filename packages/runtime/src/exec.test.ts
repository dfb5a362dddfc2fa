import {
  CommandAbortedError,
  CommandFailedError,
  CommandNotFoundError,
  CommandTimeoutError,
  HostRunner,
  requireTools,
  runJson,
} from './exec.js';
import { ScriptedRunner } from './testing/index.js';

const runner = new HostRunner({ defaultTimeoutMs: 10_000 });

describe('HostRunner', () => {
  it('runs an argument array without a shell, with LC_ALL=C', async () => {
    const res = await runner.run('sh', ['-c', 'printf "%s|%s" "$LC_ALL" "$1"', 'sh', 'a b;$(echo no)']);
    expect(res.stdout).toBe('C|a b;$(echo no)');
    expect(res.exitCode).toBe(0);
  });

  it('reports a failing exit code with command, code and stderr', async () => {
    const p = runner.run('sh', ['-c', 'echo oops >&2; exit 3']);
    await expect(p).rejects.toBeInstanceOf(CommandFailedError);
    await expect(p).rejects.toMatchObject({
      exitCode: 3,
      stderr: 'oops\n',
      kind: 'Internal',
      message: 'sh -c "echo oops >&2; exit 3": exit code 3: oops',
    });
  });

  it('accepts extra ok exit codes', async () => {
    const res = await runner.run('sh', ['-c', 'exit 2'], { okExitCodes: [0, 2] });
    expect(res.exitCode).toBe(2);
  });

  it('kills a process that exceeds its timeout', async () => {
    const started = Date.now();
    const p = runner.run('sleep', ['30'], { timeoutMs: 200 });
    await expect(p).rejects.toBeInstanceOf(CommandTimeoutError);
    await expect(p).rejects.toMatchObject({
      kind: 'DeadlineExceeded',
      message: 'sleep 30: no result after 200 ms, killed',
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('stops a process when the caller aborts', async () => {
    const ac = new AbortController();
    const p = runner.run('sleep', ['30'], { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    await expect(p).rejects.toBeInstanceOf(CommandAbortedError);
    const pre = runner.run('true', [], { signal: ac.signal });
    await expect(pre).rejects.toMatchObject({ message: 'true: aborted before start' });
  });

  it('names a missing tool', async () => {
    const p = runner.run('ndctl-does-not-exist', ['list']);
    await expect(p).rejects.toBeInstanceOf(CommandNotFoundError);
    await expect(p).rejects.toMatchObject({
      kind: 'FailedPrecondition',
      message: 'ndctl-does-not-exist: command not found on this machine',
    });
    expect(() =>
      requireTools(new ScriptedRunner([], ['mount']), ['mount', 'ndctl', 'lvcreate'], 'direct mode'),
    ).toThrow('direct mode needs ndctl, lvcreate, not found on this machine (Debian packages: ndctl, lvm2)');
  });

  it('passes stdin and finds tools in sbin', async () => {
    const res = await runner.run('cat', [], { input: 'hello' });
    expect(res.stdout).toBe('hello');
    expect(runner.which('sh')).toMatch(/\/sh$/);
  });
});

describe('runJson', () => {
  it('decodes JSON output and rejects garbage with the command named', async () => {
    const r = new ScriptedRunner([
      { command: 'ndctl', args: ['list'], stdout: '[{"dev":"namespace0.0"}]' },
      { command: 'ndctl', args: ['list'], stdout: 'nope' },
    ]);
    const v = await runJson(r, { command: 'ndctl', args: ['list'] }, (x) => x as Array<{ dev: string }>);
    expect(v).toEqual([{ dev: 'namespace0.0' }]);
    await expect(runJson(r, { command: 'ndctl', args: ['list'] }, (x) => x)).rejects.toThrow(
      /^ndctl list: output is not JSON/,
    );
  });
});
