import { createLogger, levelFromVerbosity } from './logger.js';

const now = () => new Date('2026-01-01T00:00:00Z');

describe('logger', () => {
  it('writes JSON with fields and redacts secrets', () => {
    const lines: string[] = [];
    const log = createLogger({ format: 'json', sink: (l) => lines.push(l), now }).child({ component: 'node' });
    log.info('loaded', {
      tlsKey: 'x',
      privateKey: 'y',
      err: new Error('bad -----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----'),
    });
    expect(JSON.parse(lines[0] as string)).toEqual({
      time: '2026-01-01T00:00:00.000Z',
      level: 'info',
      msg: 'loaded',
      component: 'node',
      tlsKey: '[REDACTED]',
      privateKey: '[REDACTED]',
      err: 'bad [REDACTED PRIVATE KEY]',
    });
  });

  it('writes text and honours the level', () => {
    const lines: string[] = [];
    const log = createLogger({ sink: (l) => lines.push(l), now, level: 'info' });
    log.debug('hidden');
    log.warn('disk full', { node: 'n1', path: '/a b' });
    expect(lines).toEqual(['time=2026-01-01T00:00:00.000Z level=warn msg="disk full" node=n1 path="/a b"']);
    expect(levelFromVerbosity(5)).toBe('debug');
    expect(levelFromVerbosity(3)).toBe('info');
  });
});
