import { OPERATOR_VERSION } from './version.js';
import { jest } from '@jest/globals';
import { KubeApiError } from './kube/kube-errors.js';
import { OperatorFlagError, parseOperatorFlags } from './binary/flags.js';
import { listenAddress } from './binary/http-server.js';
import { watchedKinds } from './loop/control-loop.js';
import { runOperator } from './main.js';
import { CR_NAME, NAMES, harness, testCertDeps } from './testing/harness.js';

jest.setTimeout(60_000);

describe('parseOperatorFlags', () => {
  it('takes namespace and image from the environment by default', () => {
    expect(parseOperatorFlags([], { POD_NAMESPACE: 'ops', PMEM_CSI_OPERATOR_IMAGE: 'example.org/op:1' })).toEqual({
      namespace: 'ops',
      leaderElect: false,
      metricsAddress: '127.0.0.1:8080',
      logFormat: 'text',
      logLevel: 'info',
      driverImage: 'example.org/op:1',
      version: '0.1.0',
    });
    expect(parseOperatorFlags(['--driver-image=x/y:1'], {})).toMatchObject({
      namespace: 'pmem-csi',
      driverImage: 'x/y:1',
    });
  });

  it('parses every flag', () => {
    const argv = [
      '--namespace=n',
      '--leader-elect',
      '--metrics-address=:9090',
      '--log-format=json',
      '--log-level=debug',
      '--driver-image=a/b:2',
      '--kubeconfig=/k',
      '--operator-version=9.9.9',
    ];
    expect(parseOperatorFlags(argv, { PMEM_CSI_OPERATOR_IMAGE: 'ignored/x:1' })).toEqual({
      namespace: 'n',
      leaderElect: true,
      metricsAddress: ':9090',
      logFormat: 'json',
      logLevel: 'debug',
      driverImage: 'a/b:2',
      kubeconfig: '/k',
      version: '9.9.9',
    });
  });

  it('answers --help and --version without running, and refuses unknown options', () => {
    const help = parseOperatorFlags(['--help'], {});
    expect(help).toEqual({ output: expect.stringMatching(/^Usage: pmem-csi-operator \[options\]/) });
    expect('output' in help ? help.output : '').toContain('--operator-version <VERSION>');
    expect(parseOperatorFlags(['--version'], {})).toEqual({ output: `pmem-csi-operator ${OPERATOR_VERSION}` });
    expect(() => parseOperatorFlags(['--bogus', '--driver-image=x/y:1'], {})).toThrow(
      new OperatorFlagError(["unknown option '--bogus'"]),
    );
  });

  it('reports every problem at once', () => {
    const error = (() => {
      try {
        parseOperatorFlags(['--log-format=xml', '--log-level=loud', '--metrics-address=nope'], {});
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(OperatorFlagError);
    expect((error as OperatorFlagError).problems).toEqual([
      '--log-format: "xml" is not allowed; allowed values: text, json',
      '--log-level: "loud" is not allowed; allowed values: debug, info, warn, error',
      '--metrics-address: "nope" must be HOST:PORT, :PORT or empty',
      '--driver-image (or $PMEM_CSI_OPERATOR_IMAGE) is required: it is the default driver image',
    ]);
  });

  it('splits listen addresses', () => {
    expect(listenAddress(':8080')).toEqual({ host: undefined, port: 8080 });
    expect(listenAddress('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(listenAddress('[::1]:9')).toEqual({ host: '::1', port: 9 });
  });
});

describe('runOperator', () => {
  it('exits 2 with the usage on bad flags', async () => {
    const lines: string[] = [];
    await expect(runOperator(['--bogus'], {}, { logSink: (l) => lines.push(l) })).resolves.toBe(2);
    expect(lines.join('\n')).toContain('Usage: pmem-csi-operator [options]');
  });

  it('leads, reconciles, serves probes and metrics, and releases the lease on stop', async () => {
    const h = harness();
    h.putCr();
    const stop = new AbortController();
    let port = 0;
    const lines: string[] = [];
    const exit = runOperator(
      [
        '--leader-elect',
        '--metrics-address=127.0.0.1:0',
        '--namespace=pmem-csi',
        '--driver-image=example.org/driver:B',
        '--operator-version=B',
        '--log-format=json',
      ],
      {},
      {
        kube: h.kube,
        stop: stop.signal,
        identity: 'replica-1',
        certs: testCertDeps,
        logSink: (l) => lines.push(l),
        onListening: (p) => (port = p),
      },
    );
    const deadline = Date.now() + 20_000;
    while (h.cr().status?.observedGeneration !== 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 25));
    expect(h.object('daemonSet', NAMES.nodeDaemonSet)).toBeDefined();
    expect(h.kube.leases.get('pmem-csi/pmem-csi-operator')?.holderIdentity).toBe('replica-1');
    expect(port).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain('pmem_csi_operator_leader 1');
    expect(metrics).toMatch(/pmem_csi_operator_reconciles_total\{result="success"\} [1-9]/);
    expect(h.events.length).toBe(0); // the harness recorder is not used by main; events go to the fake apiserver
    expect(h.kube.events.map((e) => e.reason)).toContain('NewDeployment');
    stop.abort();
    await expect(exit).resolves.toBe(0);
    expect(h.kube.leases.get('pmem-csi/pmem-csi-operator')?.holderIdentity).toBe('');
    expect(h.kube.watchCount).toBe(0);
    expect(lines.some((l) => JSON.parse(l).msg === 'stopping')).toBe(true);
    expect(CR_NAME).toBe('pmem-csi.intel.com');
  });

  it('counts the routine ends of watches as restarts by reason, never as API access failures (issue 32)', async () => {
    const h = harness();
    h.putCr();
    // As @kubernetes/client-node 1.4 answers an abort the operator asked for (a stalled watch).
    h.kube.stopRejectsWith = new KubeApiError(0, 'The user aborted a request.');
    const stop = new AbortController();
    let port = 0;
    const exit = runOperator(
      ['--metrics-address=127.0.0.1:0', '--namespace=pmem-csi', '--driver-image=example.org/driver:B'],
      {},
      {
        kube: h.kube,
        clock: h.clock,
        stop: stop.signal,
        certs: testCertDeps,
        logSink: () => undefined,
        onListening: (p) => (port = p),
      },
    );
    const informers = watchedKinds().length + 3; // the CRs, the Leases and the Nodes besides
    const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const value = (text: string, series: string): number | undefined => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    const restarts = (text: string, reason: string): number | undefined =>
      value(text, `pmem_csi_operator_watch_restarts_total{reason="${reason}"}`);
    /** Until every informer has restarted its watch `n` times for `reason`. */
    const restarted = async (reason: string, n: number): Promise<string> => {
      const deadline = Date.now() + 20_000;
      let text = await scrape();
      while ((restarts(text, reason) !== n * informers || h.kube.watchCount !== informers) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
        text = await scrape();
      }
      return text;
    };
    try {
      const deadline = Date.now() + 20_000;
      while ((h.cr().status?.observedGeneration !== 1 || h.kube.watchCount !== informers) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 25));
      // The apiserver ends every watch at its timeout, then with 410 Gone; the informers relist.
      h.kube.breakWatches();
      await restarted('closed', 1);
      h.kube.breakWatches(new KubeApiError(410, 'too old resource version: 5 (6)'));
      await restarted('expired', 1);
      // No event for three minutes: the informers stop their watches themselves.
      h.kube.stallWatches();
      await h.clock.advance(180_000);
      let text = await restarted('stalled', 1);
      expect(
        ['closed', 'expired', 'stalled', 'failed', 'relist'].map((reason) => [reason, restarts(text, reason)]),
      ).toEqual([
        ['closed', informers],
        ['expired', informers],
        ['stalled', informers],
        ['failed', 0],
        ['relist', 0],
      ]);
      expect(value(text, 'pmem_csi_operator_api_access_failures_total')).toBe(0);
      expect(text).not.toContain('result="access_failure"');
      expect(value(text, 'pmem_csi_operator_api_reachable')).toBe(1);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);

      // A watch cut by the connection is trouble: a restart that failed, and a failed request.
      h.kube.breakWatches(new KubeApiError(0, 'socket hang up'));
      text = await restarted('failed', 1);
      expect(restarts(text, 'failed')).toBe(informers);
      expect(value(text, 'pmem_csi_operator_api_access_failures_total')).toBe(informers);
    } finally {
      stop.abort();
      await expect(exit).resolves.toBe(0);
    }
  });

  it('reports not ready with the reason while the API refuses its credentials, and ready again after a success', async () => {
    const h = harness();
    h.putCr();
    const stop = new AbortController();
    let port = 0;
    const exit = runOperator(
      ['--metrics-address=127.0.0.1:0', '--namespace=pmem-csi', '--driver-image=example.org/driver:B'],
      {},
      {
        kube: h.kube,
        stop: stop.signal,
        certs: testCertDeps,
        logSink: () => undefined,
        onListening: (p) => (port = p),
        apiHealth: { failures: 1, boundMs: 0 },
      },
    );
    const readyz = async (): Promise<[number, string]> => {
      const r = await fetch(`http://127.0.0.1:${port}/readyz`);
      return [r.status, await r.text()];
    };
    const until = async (status: number): Promise<[number, string]> => {
      const deadline = Date.now() + 20_000;
      let last = await readyz();
      while (last[0] !== status && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
        last = await readyz();
      }
      return last;
    };
    try {
      const deadline = Date.now() + 20_000;
      while (h.cr().status?.observedGeneration !== 1 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 25));
      expect(await until(200)).toEqual([200, 'ok\n']);
      // Credentials revoked: every watch ends, every relist is refused.
      h.kube.failOn('list', new KubeApiError(401, 'Unauthorized'), { times: 1_000_000 });
      h.kube.breakWatches();
      expect(await until(503)).toEqual([
        503,
        expect.stringMatching(
          /^cannot reach or act on the Kubernetes API: the last \d+ requests over \d+s failed \(last: list \w+: 401 Unauthorized: Unauthorized\)\n$/,
        ),
      ]);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toContain('pmem_csi_operator_api_reachable 0');
      expect(metrics).toMatch(/pmem_csi_operator_api_access_failures_total [1-9]/);
      h.kube.clearFailures();
      expect(await until(200)).toEqual([200, 'ok\n']);
    } finally {
      stop.abort();
      await expect(exit).resolves.toBe(0);
    }
  });
});
