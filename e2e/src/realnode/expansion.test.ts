// The helpers of the expansion scenarios on hand-made input: a wrong capability reading would make
// the ext4 scenario expect a growth the machine cannot do (or accept a refusal where it can).
import {
  CAP_SYS_RESOURCE,
  describeClaim,
  growWatcherScript,
  inBoundingSet,
  quantityBytes,
  watcherSizes,
} from './expansion.js';

const status = (capBnd: string): string => `Name:\tnode\nCapEff:\t000001ffffffffff\nCapBnd:\t${capBnd}\nCapAmb:\t0\n`;

describe('inBoundingSet', () => {
  it('reads one capability of the bounding set', () => {
    expect(inBoundingSet(CAP_SYS_RESOURCE, status('000001ffffffffff'))).toBe(true);
    // This CI VM's set: everything up to cap 40 except CAP_SYS_RESOURCE (24).
    expect(inBoundingSet(CAP_SYS_RESOURCE, status('000001fffeffffff'))).toBe(false);
    expect(inBoundingSet(21, status('000001fffeffffff'))).toBe(true);
  });

  it('fails without a CapBnd line instead of guessing', () => {
    expect(() => inBoundingSet(CAP_SYS_RESOURCE, 'Name:\tx\n')).toThrow('/proc/self/status has no CapBnd line');
  });
});

describe('the watcher and the claim', () => {
  it('parses the watcher report and quantities', () => {
    expect(watcherSizes('60400 126000')).toEqual([60400, 126000]);
    expect(watcherSizes('oops').map(Number.isNaN)).toEqual([true, true]);
    expect(quantityBytes('128Mi')).toBe(128 * 1024 ** 2);
    expect(quantityBytes(undefined)).toBeNaN();
  });

  it('writes the token, waits for growth or /data/stop, and fills only a grown filesystem', () => {
    const script = growWatcherScript('tok-1', 80);
    expect(script).toContain('echo tok-1 > /data/f');
    expect(script).toContain('[ ! -e /data/stop ]');
    expect(script).toContain('dd if=/dev/zero of=/data/fill bs=1M count=80 conv=fsync');
    expect(script.split('\n').at(-1)).toBe('echo "$before $now" > /dev/termination-log');
  });

  it('describes a claim in one line', () => {
    expect(
      describeClaim({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'c' },
        spec: { resources: { requests: { storage: '128Mi' } } },
        status: {
          capacity: { storage: '64Mi' },
          allocatedResourceStatuses: { storage: 'NodeResizePending' },
          conditions: [{ type: 'FileSystemResizePending', status: 'True' }],
        },
      }),
    ).toBe(
      'claim c: requested 128Mi, status.capacity 64Mi, resize NodeResizePending, conditions FileSystemResizePending=True',
    );
    expect(describeClaim(undefined)).toBe('claim absent');
  });
});
