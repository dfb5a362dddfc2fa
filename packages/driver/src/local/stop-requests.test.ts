// Stop requests of the local stack: the first signal aborts with its name and the exit code
// 128 + signal number; the same Ctrl-C arriving twice at once (terminal and npm) is one request; a
// later one is a repeat; dispose removes the handlers.
import { describe, expect, it } from '@jest/globals';
import { watchStopRequests } from './stop-requests.js';

describe('watchStopRequests', () => {
  it('the first signal stops; a simultaneous copy is the same request, a later one a repeat', async () => {
    const before = process.listenerCount('SIGTERM');
    const stop = watchStopRequests();
    const repeats: string[] = [];
    stop.onRepeat((r) => repeats.push(r));
    try {
      expect(stop.signal.aborted).toBe(false);
      process.emit('SIGTERM', 'SIGTERM');
      expect(await stop.requested).toBe('SIGTERM');
      expect(stop.signal.aborted).toBe(true);
      expect(stop.exitCode()).toBe(143);
      process.emit('SIGINT', 'SIGINT');
      expect(repeats).toEqual([]);
      await new Promise((r) => setTimeout(r, 1100));
      process.emit('SIGINT', 'SIGINT');
      expect(repeats).toEqual(['SIGINT']);
    } finally {
      stop.dispose();
    }
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});
