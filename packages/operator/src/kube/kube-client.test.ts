import { IdentifiedKubeConfig, k8s, loadKubeConfig, operatorUserAgent } from './kube-client.js';
import { OPERATOR_VERSION } from '../version.js';

describe('@kubernetes/client-node under jest (ESM)', () => {
  it('builds a KubeConfig, a typed API client and serialises an object', () => {
    const kc = loadKubeConfig({ server: 'https://127.0.0.1:6443', token: 'not-a-secret' });
    expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    const core = kc.makeApiClient(k8s.CoreV1Api);
    expect(typeof core.readNamespace).toBe('function');
    const cm: k8s.V1ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x', creationTimestamp: new Date('2026-01-02T03:04:05Z') },
      data: { a: 'b' },
    };
    // dumpYaml serialises through the client's typed ObjectSerializer (Date -> RFC 3339 string),
    // loadYaml deserialises into the typed model class again.
    const yaml = k8s.dumpYaml(cm);
    expect(yaml).toContain("creationTimestamp: '2026-01-02T03:04:05.000Z'");
    const back = k8s.loadYaml<k8s.V1ConfigMap>(yaml);
    expect(back).toBeInstanceOf(k8s.V1ConfigMap);
    expect(back.metadata?.creationTimestamp).toEqual(new Date('2026-01-02T03:04:05Z'));
    expect(back.data).toEqual({ a: 'b' });
  });
});

describe('loadKubeConfig', () => {
  it('identifies the requests when given a user agent, and leaves the client as it is otherwise', () => {
    const kc = loadKubeConfig({ server: 'https://127.0.0.1:6443', userAgent: operatorUserAgent(OPERATOR_VERSION) });
    expect(kc).toBeInstanceOf(IdentifiedKubeConfig);
    expect((kc as IdentifiedKubeConfig).userAgent).toBe('pmem-csi-operator/0.1.0');
    expect(loadKubeConfig({ server: 'https://127.0.0.1:6443' })).not.toBeInstanceOf(IdentifiedKubeConfig);
  });
});
