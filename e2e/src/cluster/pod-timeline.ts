// Every pod of one namespace, from a list and then a watch from its resourceVersion (restarted from
// the last version seen when the client ends it), so that nothing between two samples is missed:
// which node driver pods — the Go operator's (app.kubernetes.io/name=pmem-csi-node) and ours
// (name=pmem-csi, component=node) — existed on which node at once, terminating ones included
// (a pod counts from its first event with a node until its DELETED event).
import * as k8s from '@kubernetes/client-node';
import type { Kube, KubeObject } from './kube.js';

interface Pod extends KubeObject {
  spec?: { nodeName?: string };
}

type Driver = 'go' | 'ours';

function driverOf(pod: Pod): Driver | undefined {
  const labels = pod.metadata.labels ?? {};
  if (labels['app.kubernetes.io/name'] === 'pmem-csi-node') return 'go';
  if (labels['app.kubernetes.io/name'] === 'pmem-csi' && labels['app.kubernetes.io/component'] === 'node')
    return 'ours';
  return undefined;
}

export interface TimelineSummary {
  /** Watch events seen. */
  readonly events: number;
  /** "node: go pod X (Go) with pod Y (ours) from +N s", once per pair. */
  readonly overlaps: readonly string[];
  /** Nodes where one of our node pods appeared. */
  readonly nodesWithOurs: readonly string[];
  /** Per node: when its last Go node pod went and its first of ours came (seconds since the start). */
  readonly perNode: readonly string[];
}

export class PodTimeline {
  readonly #kube: Kube;
  readonly #path: string;
  readonly #started = Date.now();
  /** Node driver pods present now: pod name -> [node, driver]. */
  readonly #present = new Map<string, [string, Driver]>();
  /** "node go-pod our-pod" -> the first time both were seen there. */
  readonly #overlaps = new Map<string, string>();
  readonly #goGone = new Map<string, number>();
  readonly #oursCame = new Map<string, number>();
  #events = 0;
  #resourceVersion = '';
  #abort: AbortController | undefined;
  #stopped = false;
  #error: Error | undefined;

  private constructor(kube: Kube, namespace: string) {
    this.#kube = kube;
    this.#path = `/api/v1/namespaces/${namespace}/pods`;
  }

  /** List the pods of `namespace` and watch them from there on. */
  static async start(kube: Kube, namespace: string): Promise<PodTimeline> {
    const t = new PodTimeline(kube, namespace);
    const list = await kube.request<{ metadata: { resourceVersion: string }; items: Pod[] }>('GET', t.#path);
    for (const pod of list.items) t.#apply('ADDED', pod);
    t.#resourceVersion = list.metadata.resourceVersion;
    await t.#watch();
    return t;
  }

  async #watch(): Promise<void> {
    const watch = new k8s.Watch(this.#kube.config);
    this.#abort = await watch.watch(
      this.#path,
      { resourceVersion: this.#resourceVersion, allowWatchBookmarks: true },
      (type: string, object: Pod) => {
        if (object.metadata?.resourceVersion !== undefined) this.#resourceVersion = object.metadata.resourceVersion;
        if (type !== 'BOOKMARK') this.#apply(type, object);
      },
      (err: unknown) => {
        if (this.#stopped) return;
        // Ended by the client (inactivity) or the server (timeout): go on from the last version.
        this.#watch().catch((e: unknown) => {
          this.#error = new Error(`the pod watch could not go on after ${String(err)}: ${String(e)}`);
        });
      },
    );
  }

  #apply(type: string, pod: Pod): void {
    this.#events++;
    const driver = driverOf(pod);
    const node = pod.spec?.nodeName;
    if (driver === undefined || node === undefined) return;
    const name = pod.metadata.name;
    const at = Date.now() - this.#started;
    if (type === 'DELETED') {
      this.#present.delete(name);
      if (driver === 'go') this.#goGone.set(node, at);
      return;
    }
    this.#present.set(name, [node, driver]);
    if (driver === 'ours' && !this.#oursCame.has(node)) this.#oursCame.set(node, at);
    for (const [other, [otherNode, otherDriver]] of this.#present) {
      if (otherNode !== node || otherDriver === driver) continue;
      const [go, ours] = driver === 'go' ? [name, other] : [other, name];
      const pair = `${node} ${go} ${ours}`;
      if (!this.#overlaps.has(pair))
        this.#overlaps.set(pair, `${node}: ${go} (Go) with ${ours} (ours) from +${(at / 1000).toFixed(1)} s`);
    }
  }

  /** The error that ended the watch for good, if any. */
  failure(): Error | undefined {
    return this.#error;
  }

  summary(): TimelineSummary {
    const s = (ms: number | undefined): string => (ms === undefined ? '-' : `+${(ms / 1000).toFixed(1)} s`);
    const nodes = [...new Set([...this.#goGone.keys(), ...this.#oursCame.keys()])].sort();
    return {
      events: this.#events,
      overlaps: [...this.#overlaps.values()],
      nodesWithOurs: [...this.#oursCame.keys()],
      perNode: nodes.map((n) => `${n} Go pod gone ${s(this.#goGone.get(n))}, ours ${s(this.#oursCame.get(n))}`),
    };
  }

  stop(): void {
    this.#stopped = true;
    this.#abort?.abort();
  }
}
