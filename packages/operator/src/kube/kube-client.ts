// The one adapter between the operator and @kubernetes/client-node. The client is ESM-only (>= 1.0);
// the workspace is ESM, so it is imported natively here and nowhere else in the operator.
//
// Identification: without help every request carries node-fetch's default user agent
// ("node-fetch/1.0 (+https://github.com/bitinn/node-fetch)"), so apiserver audit logs and
// `apiserver_request_total{client=...}` cannot tell the operator from any other JS client. The client
// has two request paths, and both ask the KubeConfig for their headers: the generated API clients
// (KubernetesObjectApi, CustomObjectsApi, ...) call `applySecurityAuthentication(context)` for
// every request, and Watch calls `applyToFetchOptions` -> `applyToHTTPSOptions`. node-fetch only
// fills in its default when no User-Agent header is set, so a KubeConfig that sets one on both
// paths identifies every request.
import * as k8s from '@kubernetes/client-node';

export { k8s };

type RequestContext = Parameters<k8s.KubeConfig['applySecurityAuthentication']>[0];
type HttpsOptions = Parameters<k8s.KubeConfig['applyToHTTPSOptions']>[0];

/** The operator's user agent: `pmem-csi-operator/<version>`, as client-go names its binaries. */
export function operatorUserAgent(version: string): string {
  return `pmem-csi-operator/${version}`;
}

/** A KubeConfig whose every request (API clients and watches) carries `userAgent`. */
export class IdentifiedKubeConfig extends k8s.KubeConfig {
  readonly userAgent: string;

  constructor(userAgent: string) {
    super();
    this.userAgent = userAgent;
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    context.setHeaderParam('User-Agent', this.userAgent);
  }

  override async applyToHTTPSOptions(opts: HttpsOptions): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    opts.headers = { ...opts.headers, 'User-Agent': this.userAgent };
  }
}

export interface KubeConfigOptions {
  readonly server?: string;
  readonly token?: string;
  readonly file?: string;
  /** Sent with every request (default: node-fetch's own). */
  readonly userAgent?: string;
}

/** A KubeConfig for an explicit API server URL (tests, e2e) or from the default locations. */
export function loadKubeConfig(options: KubeConfigOptions = {}): k8s.KubeConfig {
  const kc = options.userAgent === undefined ? new k8s.KubeConfig() : new IdentifiedKubeConfig(options.userAgent);
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
