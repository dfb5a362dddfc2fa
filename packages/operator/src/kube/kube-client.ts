// The one adapter between the operator and @kubernetes/client-node. The client is ESM-only (>= 1.0);
// the workspace is ESM, so it is imported natively here and nowhere else in the operator.
//
// Identification: without help the client's requests carry its default user agent
// ("kubernetes-client-javascript/<version>"), so apiserver audit logs and
// `apiserver_request_total{client=...}` cannot tell the operator from any other JS client. The client
// has two request paths: the generated API clients (KubernetesObjectApi, CustomObjectsApi, ...) get
// their configuration from `makeApiClient`, whose request middleware sets the User-Agent after
// `applySecurityAuthentication(context)` ran, and Watch takes its headers from
// `applySecurityAuthentication` alone. IdentifiedKubeConfig sets ours on both: its own middleware in
// `makeApiClient`, and the header in `applySecurityAuthentication`.
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

  /**
   * The API clients of client-node 2.x set their own User-Agent in a request middleware that runs
   * after applySecurityAuthentication; these clients get ours as their middleware instead.
   */
  override makeApiClient<T extends k8s.ApiType>(apiClientType: k8s.ApiConstructor<T>): T {
    const cluster = this.getCurrentCluster();
    if (cluster === null) throw new Error('no current cluster in the kubeconfig');
    return new apiClientType(
      k8s.createConfiguration({
        baseServer: new k8s.ServerConfiguration(cluster.server, {}),
        authMethods: { default: this },
        middleware: [k8s.setHeaderMiddleware('User-Agent', this.userAgent)],
      }),
    );
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
  /** Sent with every request (default: the client's own). */
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
