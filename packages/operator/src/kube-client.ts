// The one adapter between the operator and @kubernetes/client-node. The client is ESM-only (>= 1.0);
// the workspace is ESM, so it is imported natively here and nowhere else in the operator.
import * as k8s from '@kubernetes/client-node';

export { k8s };

/** A KubeConfig for an explicit API server URL (tests, e2e) or from the default locations. */
export function loadKubeConfig(options: { server?: string; token?: string; file?: string } = {}): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (options.server !== undefined) {
    kc.loadFromOptions({
      clusters: [{ name: 'cluster', server: options.server, skipTLSVerify: false }],
      users: [{ name: 'user', token: options.token }],
      contexts: [{ name: 'context', cluster: 'cluster', user: 'user' }],
      currentContext: 'context',
    });
  } else if (options.file !== undefined) {
    kc.loadFromFile(options.file);
  } else {
    kc.loadFromDefault();
  }
  return kc;
}
