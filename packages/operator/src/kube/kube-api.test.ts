import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ClientKubeApi,
  collectionPath,
  statusPatch,
  WATCH_CLIENT_INACTIVITY_MS,
  type ClientKubeApiOptions,
} from './kube-api.js';
import { INFORMER_DEFAULTS } from './informer.js';
import { IdentifiedKubeConfig, operatorUserAgent } from './kube-client.js';
import { KubeApiError } from './kube-errors.js';
import type { KubeObject, WatchEvent } from './kube-port.js';
import { RESOURCES } from './resources.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly contentType: string | undefined;
  readonly body: string;
  readonly userAgent: string | undefined;
}

type Route = (req: IncomingMessage, body: string, res: ServerResponse) => boolean;

const json = (res: ServerResponse, status: number, value: unknown): true => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
  return true;
};

const DISCOVERY: Route = (req, _b, res) => {
  if (req.method !== 'GET') return false;
  if (req.url === '/api/v1')
    return json(res, 200, {
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [{ name: 'secrets', namespaced: true, kind: 'Secret', verbs: [] }],
    });
  if (req.url === '/apis/storage.k8s.io/v1')
    return json(res, 200, {
      kind: 'APIResourceList',
      groupVersion: 'storage.k8s.io/v1',
      resources: [{ name: 'csidrivers', namespaced: false, kind: 'CSIDriver', verbs: [] }],
    });
  return false;
};

async function stub(
  routes: Route[],
  options: ClientKubeApiOptions = {},
): Promise<{ api: ClientKubeApi; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        contentType: req.headers['content-type'],
        body,
        userAgent: req.headers['user-agent'],
      });
      for (const r of [DISCOVERY, ...routes]) if (r(req, body, res)) return;
      json(res, 404, { kind: 'Status', code: 404, message: `not found: ${req.url}` });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const kc = new IdentifiedKubeConfig(operatorUserAgent('9.8.7'));
  // Plain HTTP with skipTLSVerify: the stand-in apiserver has no TLS.
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { api: new ClientKubeApi(kc, options), seen, server };
}

const close = (s: Server): Promise<void> => new Promise((r) => s.close(() => r()));

describe('ClientKubeApi on the wire', () => {
  it('applies with server-side apply, the operator field manager and force', async () => {
    const { api, seen, server } = await stub([
      (req, body, res) =>
        req.method === 'PATCH' && req.url?.startsWith('/api/v1/namespaces/ns/secrets/s?') === true
          ? json(res, 200, {
              ...JSON.parse(body),
              metadata: { name: 's', namespace: 'ns', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z' },
            })
          : false,
    ]);
    try {
      const applied = await api.apply({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's', namespace: 'ns', labels: { a: 'b' } },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': 'eA==' },
      } as KubeObject);
      const patch = seen.find((s) => s.method === 'PATCH');
      expect(patch?.contentType).toBe('application/apply-patch+yaml');
      const query = new URL(`http://x${patch?.url ?? ''}`).searchParams;
      expect([query.get('fieldManager'), query.get('force')]).toEqual(['pmem-csi-operator', 'true']);
      expect(JSON.parse(patch?.body ?? '{}')).toEqual({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's', namespace: 'ns', labels: { a: 'b' } },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': 'eA==' },
      });
      // Plain JSON back: no model classes, no Date objects.
      expect(applied.metadata.creationTimestamp).toBe('2026-01-01T00:00:00.000Z');
    } finally {
      await close(server);
    }
  });

  it('merge-patches with the operator field manager, without force, keeping nulls (they remove fields)', async () => {
    const { api, seen, server } = await stub([
      (req, body, res) =>
        req.method === 'PATCH' && req.url?.startsWith('/api/v1/namespaces/ns/secrets/s?') === true
          ? json(res, 200, { ...JSON.parse(body), metadata: { name: 's', namespace: 'ns', resourceVersion: '8' } })
          : false,
    ]);
    try {
      const patched = await api.mergePatch({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's', namespace: 'ns', resourceVersion: '7' },
        data: { old: null, 'tls.crt': 'eA==' },
      });
      const patch = seen.find((s) => s.method === 'PATCH');
      expect(patch?.contentType).toBe('application/merge-patch+json');
      const query = new URL(`http://x${patch?.url ?? ''}`).searchParams;
      expect([query.get('fieldManager'), query.get('force')]).toEqual(['pmem-csi-operator', null]);
      expect(JSON.parse(patch?.body ?? '{}')).toEqual({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's', namespace: 'ns', resourceVersion: '7' },
        data: { old: null, 'tls.crt': 'eA==' },
      });
      expect(patched.metadata.resourceVersion).toBe('8');
    } finally {
      await close(server);
    }
  });

  it('answers undefined for a missing object and false for deleting one, and maps other errors to their status', async () => {
    const { api, server } = await stub([
      (req, _b, res) =>
        req.url?.includes('/csidrivers/forbidden') === true
          ? json(res, 403, { kind: 'Status', code: 403, message: 'csidrivers "forbidden" is forbidden' })
          : false,
    ]);
    try {
      await expect(
        api.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'ns', name: 'gone' }),
      ).resolves.toBeUndefined();
      await expect(api.delete({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', name: 'gone' })).resolves.toBe(
        false,
      );
      const error = await api
        .get({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', name: 'forbidden' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubeApiError);
      expect(error).toMatchObject({ status: 403, message: 'csidrivers "forbidden" is forbidden' });
    } finally {
      await close(server);
    }
  });

  it('replaces the status with a merge patch on the status subresource (absent fields -> null)', async () => {
    const { api, seen, server } = await stub([
      (req, body, res) =>
        req.method === 'PATCH'
          ? json(res, 200, {
              apiVersion: 'pmem-csi.intel.com/v1beta1',
              kind: 'PmemCSIDeployment',
              metadata: { name: 'd' },
              ...JSON.parse(body),
            })
          : false,
    ]);
    try {
      await api.patchDeploymentStatus('d', { phase: 'Running', observedGeneration: 2 });
      const patch = seen.find((s) => s.method === 'PATCH');
      expect(patch?.url).toBe('/apis/pmem-csi.intel.com/v1beta1/pmemcsideployments/d/status');
      expect(patch?.contentType).toBe('application/merge-patch+json');
      expect(JSON.parse(patch?.body ?? '{}')).toEqual({
        status: {
          phase: 'Running',
          reason: null,
          conditions: null,
          driverComponents: null,
          observedGeneration: 2,
          lastUpdated: null,
        },
      });
      expect(statusPatch({}).status['phase']).toBeNull();
    } finally {
      await close(server);
    }
  });

  it('writes Lease times as MicroTime and reads them back', async () => {
    const { api, seen, server } = await stub([
      (req, body, res) =>
        req.method === 'POST'
          ? json(res, 201, { ...JSON.parse(body), metadata: { ...JSON.parse(body).metadata, resourceVersion: '3' } })
          : false,
    ]);
    try {
      const t = new Date('2026-02-03T04:05:06.789Z');
      const created = await api.createLease({
        name: 'l',
        namespace: 'ns',
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: t,
        renewTime: t,
        leaseTransitions: 0,
      });
      const post = seen.find((s) => s.method === 'POST');
      expect(post?.url).toBe('/apis/coordination.k8s.io/v1/namespaces/ns/leases');
      expect(JSON.parse(post?.body ?? '{}').spec).toEqual({
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: '2026-02-03T04:05:06.789000Z',
        renewTime: '2026-02-03T04:05:06.789000Z',
        leaseTransitions: 0,
      });
      expect(created).toMatchObject({
        name: 'l',
        namespace: 'ns',
        holderIdentity: 'me',
        resourceVersion: '3',
        renewTime: t,
      });
    } finally {
      await close(server);
    }
  });

  it('streams watch events with bookmarks requested, and ends with the status of an ERROR event', async () => {
    const { api, seen, server } = await stub([
      (req, _b, res) => {
        if (req.url?.startsWith('/api/v1/namespaces/ns/secrets?') !== true) return false;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '6' } } })}\n`);
        res.write(
          `${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Secret', apiVersion: 'v1', metadata: { resourceVersion: '7' } } })}\n`,
        );
        res.end(
          `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version: 5 (6)' } })}\n`,
        );
        return true;
      },
    ]);
    try {
      const events: WatchEvent[] = [];
      const handle = await api.watch(
        RESOURCES.secret,
        { namespace: 'ns', resourceVersion: '5', labelSelector: 'x=y' },
        (e) => events.push(e),
      );
      await expect(handle.done).rejects.toMatchObject({ status: 410, message: 'too old resource version: 5 (6)' });
      expect(events.map((e) => [e.type, e.object.metadata.name, e.object.kind])).toEqual([
        ['ADDED', 'a', 'Secret'],
        ['BOOKMARK', undefined, 'Secret'],
      ]);
      const query = new URL(`http://x${seen[0]?.url ?? ''}`).searchParams;
      expect([
        query.get('watch'),
        query.get('resourceVersion'),
        query.get('allowWatchBookmarks'),
        query.get('labelSelector'),
      ]).toEqual(['true', '5', 'true', 'x=y']);
      expect(Number(query.get('timeoutSeconds'))).toBeGreaterThanOrEqual(300);
    } finally {
      await close(server);
    }
  });

  it("a quiet watch lives until the client's inactivity limit, which lies beyond the informer's stall check", async () => {
    // The stand-in sends one event and then nothing, as an apiserver between bookmarks.
    const { api, server } = await stub(
      [
        (req, _b, res) => {
          if (req.url?.startsWith('/api/v1/namespaces/ns/secrets?') !== true) return false;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(
            `${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '6' } } })}\n`,
          );
          return true;
        },
      ],
      { watchInactivityMs: 600 },
    );
    try {
      const started = Date.now();
      const handle = await api.watch(RESOURCES.secret, { namespace: 'ns', resourceVersion: '5' }, () => undefined);
      await expect(handle.done).rejects.toThrow('The operation was aborted due to timeout');
      expect(Date.now() - started).toBeGreaterThanOrEqual(550); // the limit given, not an earlier one
    } finally {
      server.closeAllConnections();
      await close(server);
    }
    // client-node's own default (30 s) would end every quiet watch long before a bookmark
    expect(WATCH_CLIENT_INACTIVITY_MS).toBeGreaterThan(INFORMER_DEFAULTS.stallTimeoutMs);
  });

  it('ends a watch it stopped without an error; a close by the server resolves, a cut connection rejects without status', async () => {
    const ends: Array<'end' | 'destroy' | 'hold'> = ['hold', 'end', 'destroy'];
    const { api, server } = await stub([
      (req, _b, res) => {
        if (req.url?.startsWith('/api/v1/namespaces/ns/secrets?') !== true) return false;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '6' } } })}\n`);
        const how = ends.shift();
        if (how === 'end') setTimeout(() => res.end(), 50);
        if (how === 'destroy') setTimeout(() => req.socket.destroy(), 50);
        return true;
      },
    ]);
    const watch = async (): Promise<{ done: Promise<void>; stop(): void; events: WatchEvent[] }> => {
      const events: WatchEvent[] = [];
      const handle = await api.watch(RESOURCES.secret, { namespace: 'ns', resourceVersion: '5' }, (e) =>
        events.push(e),
      );
      return { done: handle.done, stop: () => handle.stop(), events };
    };
    try {
      // Stopped by the informer (a stall, a due relist): the client aborts and reports the abort
      // as an error without status, which the adapter must not pass on as a failure.
      const held = await watch();
      while (held.events.length === 0) await new Promise((r) => setTimeout(r, 10));
      held.stop();
      await expect(held.done).resolves.toBeUndefined();
      // The apiserver's timeout ends the stream cleanly.
      await expect((await watch()).done).resolves.toBeUndefined();
      // A connection cut in the middle of the stream: no answer.
      const cut = (await watch()).done;
      await expect(cut).rejects.toMatchObject({ status: 0 });
      await expect(cut).rejects.toThrow('terminated: other side closed');
    } finally {
      server.closeAllConnections();
      await close(server);
    }
  });

  it('lists a custom resource kind with a label selector, filling in apiVersion and kind', async () => {
    const { api, seen, server } = await stub([
      (req, _b, res) => {
        if (req.url === '/apis/pmem-csi.intel.com/v1beta1') {
          return json(res, 200, {
            kind: 'APIResourceList',
            groupVersion: 'pmem-csi.intel.com/v1beta1',
            resources: [{ name: 'pmemcsideployments', namespaced: false, kind: 'PmemCSIDeployment', verbs: [] }],
          });
        }
        if (req.url?.startsWith('/apis/pmem-csi.intel.com/v1beta1/pmemcsideployments') !== true) return false;
        return json(res, 200, {
          apiVersion: 'pmem-csi.intel.com/v1beta1',
          kind: 'PmemCSIDeploymentList',
          metadata: { resourceVersion: '42' },
          items: [
            {
              metadata: { name: 'a', uid: 'u', generation: 3 },
              spec: { deviceMode: 'direct', nodeSelector: { storage: 'pmem' } },
              status: { phase: 'Running' },
            },
          ],
        });
      },
    ]);
    try {
      const list = await api.list(RESOURCES.pmemCsiDeployment, { labelSelector: 'a=b' });
      expect(list.resourceVersion).toBe('42');
      expect(list.items).toEqual([
        {
          apiVersion: 'pmem-csi.intel.com/v1beta1',
          kind: 'PmemCSIDeployment',
          metadata: { name: 'a', uid: 'u', generation: 3 },
          spec: { deviceMode: 'direct', nodeSelector: { storage: 'pmem' } },
          status: { phase: 'Running' },
        },
      ]);
      expect(seen.at(-1)?.url).toBe('/apis/pmem-csi.intel.com/v1beta1/pmemcsideployments?labelSelector=a%3Db');
    } finally {
      await close(server);
    }
  });

  it('identifies itself as pmem-csi-operator/<version> on every request, API clients and watches alike', async () => {
    const { api, seen, server } = await stub([
      (req, body, res) =>
        req.method === 'PATCH' || req.method === 'POST'
          ? json(res, 200, {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: 's', namespace: 'ns' },
              ...JSON.parse(body),
            })
          : false,
      (req, _b, res) =>
        req.url === '/api/v1/namespaces/ns/secrets'
          ? json(res, 200, { kind: 'SecretList', metadata: { resourceVersion: '1' }, items: [] })
          : false,
      (req, _b, res) => {
        if (req.url?.startsWith('/api/v1/namespaces/ns/configmaps?') !== true) return false;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '2' } } })}\n`);
        return true;
      },
    ]);
    try {
      await api.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'ns', name: 'gone' });
      await api.list(RESOURCES.secret, { namespace: 'ns' });
      await api.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' } });
      await api.patchDeploymentStatus('d', { phase: 'Running' });
      await api.createEvent({ metadata: { name: 'e', namespace: 'ns' }, involvedObject: {} });
      const handle = await api.watch(
        { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true },
        { namespace: 'ns', resourceVersion: '1' },
        () => undefined,
      );
      await handle.done;
      // Discovery (GET /api/v1), get, list, apply, status, event, watch: every one identified.
      expect(seen.map((s) => `${s.method} ${s.url.split('?')[0] ?? ''}`)).toEqual([
        'GET /api/v1',
        'GET /api/v1/namespaces/ns/secrets/gone',
        'GET /api/v1/namespaces/ns/secrets',
        'PATCH /api/v1/namespaces/ns/secrets/s',
        'PATCH /apis/pmem-csi.intel.com/v1beta1/pmemcsideployments/d/status',
        'POST /api/v1/namespaces/ns/events',
        'GET /api/v1/namespaces/ns/configmaps',
      ]);
      expect(new Set(seen.map((s) => s.userAgent))).toEqual(new Set(['pmem-csi-operator/9.8.7']));
    } finally {
      await close(server);
    }
  });

  it('builds collection paths for core, grouped, namespaced and cluster-scoped kinds', () => {
    expect(collectionPath(RESOURCES.secret, 'ns')).toBe('/api/v1/namespaces/ns/secrets');
    expect(collectionPath(RESOURCES.daemonSet, 'ns')).toBe('/apis/apps/v1/namespaces/ns/daemonsets');
    expect(collectionPath(RESOURCES.csiDriver, 'ns')).toBe('/apis/storage.k8s.io/v1/csidrivers');
    expect(collectionPath(RESOURCES.pmemCsiDeployment, undefined)).toBe(
      '/apis/pmem-csi.intel.com/v1beta1/pmemcsideployments',
    );
  });
});
