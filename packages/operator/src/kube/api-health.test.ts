import { ApiHealth, MonitoredKubeApi, isAccessFailure } from './api-health.js';
import { KubeApiError } from './kube-errors.js';
import type { WatchHandle } from './kube-port.js';
import { RESOURCES } from './resources.js';
import { FakeKube } from '../testing/fake-kube.js';
import { ManualClock, settle } from '../testing/manual-clock.js';

const unauthorized = (): KubeApiError => new KubeApiError(401, 'Unauthorized');
const NOT_READY = 'cannot reach or act on the Kubernetes API: the last';

function setup(): { clock: ManualClock; health: ApiHealth; fake: FakeKube; kube: MonitoredKubeApi } {
  const clock = new ManualClock();
  const health = new ApiHealth({ clock, failures: 3, boundMs: 30_000 });
  const fake = new FakeKube();
  return { clock, health, fake, kube: new MonitoredKubeApi(fake, health) };
}

describe('isAccessFailure', () => {
  it('is true for no answer, 401 and 403 only', () => {
    expect([0, 401, 403, 404, 409, 422, 500, 503].map((s) => isAccessFailure(new KubeApiError(s, 'x')))).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(isAccessFailure(new Error('not from the port'))).toBe(false);
  });
});

describe('ApiHealth', () => {
  it('stays ready below the failure count and within the bound, and turns not ready when both are exceeded', async () => {
    const { clock, health, fake, kube } = setup();
    fake.failOn('list', unauthorized(), { times: 10 });
    await expect(kube.list(RESOURCES.daemonSet)).rejects.toThrow('Unauthorized');
    await clock.advance(40_000);
    await expect(kube.list(RESOURCES.daemonSet)).rejects.toThrow('Unauthorized');
    // Two failures over 40 s: fewer than three.
    expect(health.problem()).toBeUndefined();
    await expect(kube.list(RESOURCES.daemonSet)).rejects.toThrow('Unauthorized');
    expect(health.problem()).toBe(
      `${NOT_READY} 3 requests over 40s failed (last: list DaemonSet: 401 Unauthorized: Unauthorized)`,
    );
    expect(health.failuresTotal).toBe(3);
  });

  it('needs the failures to last for the bound: three quick ones are not enough until 30 s have passed', async () => {
    const { clock, health, fake, kube } = setup();
    fake.failOn('get', new KubeApiError(0, 'connect ECONNREFUSED 127.0.0.1:6443'), { times: 3 });
    for (let i = 0; i < 3; i++)
      await expect(kube.get({ ...RESOURCES.secret, name: 's', namespace: 'n' })).rejects.toThrow('ECONNREFUSED');
    await clock.advance(29_999);
    expect(health.problem()).toBeUndefined();
    await clock.advance(1);
    expect(health.problem()).toBe(
      `${NOT_READY} 3 requests over 30s failed (last: get Secret: no answer: connect ECONNREFUSED 127.0.0.1:6443)`,
    );
  });

  it('is ready again after one success, and a new streak starts from zero', async () => {
    const { clock, health, fake, kube } = setup();
    fake.failOn('patchDeploymentStatus', new KubeApiError(403, 'forbidden'), { times: 3 });
    fake.put({ ...RESOURCES.pmemCsiDeployment, metadata: { name: 'd' } });
    for (let i = 0; i < 3; i++) await expect(kube.patchDeploymentStatus('d', {})).rejects.toThrow('forbidden');
    await clock.advance(31_000);
    expect(health.problem()).toBe(
      `${NOT_READY} 3 requests over 31s failed (last: patch PmemCSIDeployment status: 403 Forbidden: forbidden)`,
    );
    await kube.patchDeploymentStatus('d', {});
    expect(health.problem()).toBeUndefined();
    fake.failOn('list', unauthorized(), { times: 3 });
    for (let i = 0; i < 3; i++) await expect(kube.list(RESOURCES.secret)).rejects.toThrow();
    expect(health.problem()).toBeUndefined(); // the new streak is 0 s old
    expect(health.failuresTotal).toBe(6);
  });

  it('counts answers other than 401/403 as reaching the API: they end a streak', async () => {
    const { clock, health, fake, kube } = setup();
    fake.failOn('list', unauthorized(), { times: 3 });
    for (let i = 0; i < 3; i++) await expect(kube.list(RESOURCES.secret)).rejects.toThrow();
    await clock.advance(60_000);
    expect(health.problem()).toContain(NOT_READY);
    fake.failOn('apply', new KubeApiError(422, 'invalid'));
    await expect(
      kube.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'n' } }),
    ).rejects.toThrow('invalid');
    expect(health.problem()).toBeUndefined();
  });

  it('counts a watch refused on opening and one that ends with an access failure; a clean end is a success', async () => {
    const { clock, health, fake, kube } = setup();
    fake.failOn('watch', unauthorized(), { times: 2 });
    for (let i = 0; i < 2; i++)
      await expect(kube.watch(RESOURCES.secret, { resourceVersion: '1' }, () => undefined)).rejects.toThrow(
        'Unauthorized',
      );
    const open = await kube.watch(RESOURCES.secret, { resourceVersion: '1' }, () => undefined);
    fake.failOn('list', unauthorized(), { times: 2 });
    for (let i = 0; i < 2; i++) await expect(kube.list(RESOURCES.secret)).rejects.toThrow('Unauthorized');
    await clock.advance(31_000);
    // Opening the third watch answered: only the two lists since count.
    expect(health.problem()).toBeUndefined();
    fake.breakWatches(new KubeApiError(0, 'socket hang up'));
    await expect(open.done).rejects.toThrow('socket hang up');
    expect(health.problem()).toBe(
      `${NOT_READY} 3 requests over 31s failed (last: watch Secret: no answer: socket hang up)`,
    );
    const clean = await kube.watch(RESOURCES.secret, { resourceVersion: '1' }, () => undefined);
    expect(health.problem()).toBeUndefined();
    fake.failOn('list', unauthorized(), { times: 3 });
    for (let i = 0; i < 3; i++) await expect(kube.list(RESOURCES.secret)).rejects.toThrow('Unauthorized');
    await clock.advance(31_000);
    expect(health.problem()).toContain(NOT_READY);
    fake.breakWatches();
    await clean.done;
    await settle();
    expect(health.problem()).toBeUndefined();
  });

  it('never counts a watch that the apiserver ended routinely or that the operator stopped as a failed request (issue 32)', async () => {
    const requests: string[] = [];
    const clock = new ManualClock();
    const health = new ApiHealth({
      clock,
      failures: 1,
      boundMs: 0,
      onRequest: (request, error) => requests.push(`${request} ${error === undefined ? 'ok' : 'failed'}`),
    });
    const fake = new FakeKube();
    const kube = new MonitoredKubeApi(fake, health);
    // As @kubernetes/client-node 1.4 answers an abort the caller asked for: an error without status.
    fake.stopRejectsWith = new KubeApiError(0, 'The user aborted a request.');
    const open = (): Promise<WatchHandle> => kube.watch(RESOURCES.secret, { resourceVersion: '1' }, () => undefined);

    // The apiserver's timeout: a clean close.
    let w = await open();
    fake.breakWatches();
    await w.done;
    // The resourceVersion expired: 410 Gone, then the informer relists.
    w = await open();
    fake.breakWatches(new KubeApiError(410, 'too old resource version: 5 (6)'));
    await expect(w.done).rejects.toMatchObject({ status: 410 });
    // A stall or a due relist: the operator stops the watch itself.
    w = await open();
    w.stop();
    await expect(w.done).rejects.toThrow('The user aborted a request.');
    await settle();
    expect(health.failuresTotal).toBe(0);
    expect(health.problem()).toBeUndefined();
    expect(requests).toEqual([
      'watch Secret ok',
      'watch Secret ok',
      'watch Secret ok',
      'watch Secret ok',
      'watch Secret ok', // the stopped watch: its opening only
    ]);

    // A watch cut by the connection is still a failed request.
    w = await open();
    fake.breakWatches(new KubeApiError(0, 'socket hang up'));
    await expect(w.done).rejects.toThrow('socket hang up');
    expect(health.failuresTotal).toBe(1);
    expect(requests.slice(-1)).toEqual(['watch Secret failed']);
    expect(health.problem()).toBe(
      `${NOT_READY} 1 requests over 0s failed (last: watch Secret: no answer: socket hang up)`,
    );
  });
});
