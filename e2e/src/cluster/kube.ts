// The cluster tier's Kubernetes client: plain REST on the wire format, authenticated from a
// kubeconfig by @kubernetes/client-node 1.4 (which also supplies the typed CoreV1Api for the odd
// call such as token requests). Why not KubernetesObjectApi: it re-serializes known kinds through
// its TypeScript models, which silently drops fields whose JSON names are not identifiers
// (`x-kubernetes-int-or-string`, `default`, `enum`, `$ref` in CRD schemas), so a valid CRD
// arrives invalid. Test objects are applied server-side under our own field manager, never the
// operator's, so the tests do not take over the operator's fields.
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { parseAllDocuments } from 'yaml';

export const E2E_FIELD_MANAGER = 'pmem-csi-e2e';
const REQUEST_TIMEOUT_MS = 30_000;

/** Any Kubernetes object as plain JSON (wire format). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{
      apiVersion: string;
      kind: string;
      name: string;
      uid: string;
      controller?: boolean;
      blockOwnerDeletion?: boolean;
    }>;
    finalizers?: string[];
    deletionTimestamp?: string;
    creationTimestamp?: string;
  };
  [field: string]: unknown;
}

export interface Ref {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** A failed API request: HTTP status and the apiserver's message. */
export class KubeError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'KubeError';
  }
}

/** HTTP status of a client error (0 when there was no HTTP answer). */
export function statusOf(e: unknown): number {
  if (e instanceof KubeError) return e.status;
  const err = e as { code?: unknown } | null;
  return typeof err?.code === 'number' ? err.code : 0;
}

export const refOf = (o: KubeObject): Ref => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: o.metadata.name,
  ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }),
});

export const describeRef = (r: Ref): string =>
  `${r.kind} ${r.namespace === undefined ? '' : `${r.namespace}/`}${r.name}`;

/** Every document of a YAML file (or text), empty documents dropped. */
export function readYamlObjects(fileOrText: string, isText = false): KubeObject[] {
  const text = isText ? fileOrText : readFileSync(fileOrText, 'utf8');
  return parseAllDocuments(text)
    .map((d) => d.toJSON() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null && typeof o === 'object' && typeof o.kind === 'string');
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

const groupPath = (apiVersion: string): string =>
  apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;

export class Kube {
  readonly config: k8s.KubeConfig;
  readonly core: k8s.CoreV1Api;
  readonly #server: URL;
  readonly #discovery = new Map<string, ApiResource[]>();
  #tls: RequestOptions | undefined;

  constructor(config: k8s.KubeConfig) {
    this.config = config;
    this.core = config.makeApiClient(k8s.CoreV1Api);
    const server = config.getCurrentCluster()?.server;
    if (server === undefined) throw new Error('the kubeconfig has no current cluster');
    this.#server = new URL(server);
  }

  static fromFile(kubeconfig: string): Kube {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    return new Kube(kc);
  }

  /** One REST call; JSON in and out; non-2xx becomes a KubeError with the apiserver's message. */
  async request<T>(
    method: string,
    path: string,
    options: { body?: unknown; contentType?: string; query?: Record<string, string> } = {},
  ): Promise<T> {
    if (this.#tls === undefined) {
      const opts: RequestOptions = {};
      await this.config.applyToHTTPSOptions(opts);
      this.#tls = opts;
    }
    const url = new URL(path, this.#server);
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v);
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    return new Promise<T>((resolve, reject) => {
      const req = request(
        url,
        {
          ...this.#tls,
          method,
          timeout: REQUEST_TIMEOUT_MS,
          headers: {
            ...this.#tls?.headers,
            Accept: 'application/json',
            ...(body === undefined ? {} : { 'Content-Type': options.contentType ?? 'application/json' }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            let parsed: unknown;
            try {
              parsed = text === '' ? {} : JSON.parse(text);
            } catch {
              parsed = { message: text };
            }
            if (status >= 200 && status < 300) resolve(parsed as T);
            else
              reject(
                new KubeError(
                  status,
                  `${method} ${url.pathname}: ${status} ${(parsed as { message?: string }).message ?? text}`,
                ),
              );
          });
        },
      );
      req.on('timeout', () =>
        req.destroy(new Error(`${method} ${url.pathname}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)),
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /** The resource (plural, scope) of a kind, from discovery (refreshed when a kind is unknown, e.g. a new CRD). */
  async #resource(apiVersion: string, kind: string): Promise<ApiResource> {
    const find = (): ApiResource | undefined =>
      this.#discovery.get(apiVersion)?.find((r) => r.kind === kind && !r.name.includes('/'));
    if (find() === undefined) {
      const list = await this.request<{ resources: ApiResource[] }>('GET', groupPath(apiVersion));
      this.#discovery.set(apiVersion, list.resources);
    }
    const found = find();
    if (found === undefined) throw new KubeError(404, `the server does not serve ${kind} in ${apiVersion}`);
    return found;
  }

  async #collection(apiVersion: string, kind: string, namespace: string | undefined): Promise<string> {
    const r = await this.#resource(apiVersion, kind);
    if (r.namespaced && namespace !== undefined)
      return `${groupPath(apiVersion)}/namespaces/${encodeURIComponent(namespace)}/${r.name}`;
    if (r.namespaced) throw new Error(`${kind} is namespaced: give a namespace`);
    return `${groupPath(apiVersion)}/${r.name}`;
  }

  async #path(ref: Ref): Promise<string> {
    const r = await this.#resource(ref.apiVersion, ref.kind);
    return `${await this.#collection(ref.apiVersion, ref.kind, r.namespaced ? (ref.namespace ?? 'default') : undefined)}/${encodeURIComponent(ref.name)}`;
  }

  /** The object, or undefined when it does not exist. */
  async get<T extends KubeObject = KubeObject>(ref: Ref): Promise<T | undefined> {
    try {
      return await this.request<T>('GET', await this.#path(ref));
    } catch (e) {
      if (statusOf(e) === 404) return undefined;
      throw e;
    }
  }

  /** Like get, but the object must exist. */
  async must<T extends KubeObject = KubeObject>(ref: Ref): Promise<T> {
    const o = await this.get<T>(ref);
    if (o === undefined) throw new Error(`${describeRef(ref)} does not exist`);
    return o;
  }

  /** Objects of a kind (in one namespace, or all namespaces when namespaced and none is given). */
  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    options: { namespace?: string; labelSelector?: string; fieldSelector?: string } = {},
  ): Promise<T[]> {
    const r = await this.#resource(apiVersion, kind);
    const path =
      r.namespaced && options.namespace !== undefined
        ? await this.#collection(apiVersion, kind, options.namespace)
        : `${groupPath(apiVersion)}/${r.name}`;
    const query: Record<string, string> = {};
    if (options.labelSelector !== undefined) query['labelSelector'] = options.labelSelector;
    if (options.fieldSelector !== undefined) query['fieldSelector'] = options.fieldSelector;
    const list = await this.request<{ items: T[] }>('GET', path, { query });
    return list.items.map((item) => ({ ...item, apiVersion, kind }));
  }

  /** Server-side apply under the e2e field manager (force: the test's word is final). */
  async apply<T extends KubeObject = KubeObject>(
    object: KubeObject,
    options: { dryRun?: boolean; fieldManager?: string } = {},
  ): Promise<T> {
    const query: Record<string, string> = { fieldManager: options.fieldManager ?? E2E_FIELD_MANAGER, force: 'true' };
    if (options.dryRun === true) query['dryRun'] = 'All';
    return this.request<T>('PATCH', await this.#path(refOf(object)), {
      body: object,
      contentType: 'application/apply-patch+yaml',
      query,
    });
  }

  async create<T extends KubeObject = KubeObject>(object: KubeObject): Promise<T> {
    return this.request<T>('POST', await this.#collection(object.apiVersion, object.kind, object.metadata.namespace), {
      body: object,
      query: { fieldManager: E2E_FIELD_MANAGER },
    });
  }

  /** JSON merge patch of `patch` (which names the object). */
  async merge<T extends KubeObject = KubeObject>(patch: KubeObject): Promise<T> {
    return this.request<T>('PATCH', await this.#path(refOf(patch)), {
      body: patch,
      contentType: 'application/merge-patch+json',
      query: { fieldManager: E2E_FIELD_MANAGER },
    });
  }

  /**
   * Delete (background propagation); false when it did not exist. `gracePeriodSeconds` 0 is
   * `kubectl delete --grace-period=0 --force`: the object goes at once, the kubelet kills what runs.
   */
  async delete(
    ref: Ref,
    options: { propagation?: 'Background' | 'Foreground' | 'Orphan'; gracePeriodSeconds?: number } = {},
  ): Promise<boolean> {
    try {
      await this.request('DELETE', await this.#path(ref), {
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          propagationPolicy: options.propagation ?? 'Background',
          ...(options.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: options.gracePeriodSeconds }),
        },
      });
      return true;
    } catch (e) {
      if (statusOf(e) === 404) return false;
      throw e;
    }
  }
}
