// A list+watch cache of one resource type that does not trust the watch. JavaScript Kubernetes
// watches are known to stop delivering events without closing (kubernetes-client/javascript
// issues; kubernetes-fluent-client added a "no event for N seconds" restart for that reason), so:
// - watches ask for BOOKMARK events (the apiserver sends one about every minute on a quiet
//   watch), and a watch silent for longer than `stallTimeoutMs` is treated as dead and restarted;
// - the cache is relisted every `relistIntervalMs` even on a healthy watch, and the difference
//   is emitted as events, so a missed event is repaired within one interval;
// - a watch that ends or fails (410 Gone included) is restarted from a fresh list, with capped
//   exponential backoff while listing fails.
// Every restart is counted by its reason (WatchRestartReason): `closed` (the apiserver ended the
// watch at its timeout) and `expired` (410 Gone: the resourceVersion is too old) are the routine
// life of a watch; `failed` (any other error), `stalled` and `relist` are this module's own
// decisions or trouble. None of them is an API access failure (api-health.ts): a relist that
// fails is, as a request of its own.
import type { Logger } from '@pmem-csi/runtime';
import { sleep, type Clock, type TimerHandle } from '../clock.js';
import { isExpired } from './kube-errors.js';
import type { KubeApi, KubeObject, ResourceType, WatchEvent } from './kube-port.js';

export type InformerEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export type InformerHandler = (type: InformerEventType, object: KubeObject) => void;

export interface InformerOptions {
  readonly type: ResourceType;
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly clock: Clock;
  readonly log: Logger;
  readonly relistIntervalMs?: number;
  readonly stallTimeoutMs?: number;
  readonly baseBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /**
   * What of each object the cache keeps (default: all of it), e.g. the names and labels of Nodes,
   * whose status would take most of the memory. It must keep metadata.resourceVersion: a relist
   * emits MODIFIED for the objects whose resourceVersion changed.
   */
  readonly keep?: (object: KubeObject) => KubeObject;
}

export const INFORMER_DEFAULTS = {
  relistIntervalMs: 10 * 60 * 1000,
  stallTimeoutMs: 3 * 60 * 1000,
  baseBackoffMs: 1000,
  maxBackoffMs: 60 * 1000,
} as const;

/** Why a watch was restarted (label `reason` of pmem_csi_operator_watch_restarts_total). */
export const WATCH_RESTART_REASONS = ['closed', 'expired', 'failed', 'stalled', 'relist'] as const;
export type WatchRestartReason = (typeof WATCH_RESTART_REASONS)[number];

/** Restarts by reason, every reason present. */
export type WatchRestarts = Readonly<Record<WatchRestartReason, number>>;

export const noWatchRestarts = (): Record<WatchRestartReason, number> => ({
  closed: 0,
  expired: 0,
  failed: 0,
  stalled: 0,
  relist: 0,
});

type WatchEnd = WatchRestartReason | 'stopped';

const storeKey = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export class Informer {
  readonly #kube: KubeApi;
  readonly #o: InformerOptions;
  readonly #handler: InformerHandler;
  readonly #store = new Map<string, KubeObject>();
  readonly #abort = new AbortController();
  #loop: Promise<void> | undefined;
  #synced = false;
  readonly #restarts = noWatchRestarts();
  #wake: ((end: WatchEnd) => void) | undefined;

  constructor(kube: KubeApi, options: InformerOptions, handler: InformerHandler) {
    this.#kube = kube;
    this.#o = options;
    this.#handler = handler;
  }

  /** True after the first successful list. */
  get synced(): boolean {
    return this.#synced;
  }

  /** How often the watch was restarted after it ended, failed, stalled or was due for a relist. */
  get restarts(): number {
    return WATCH_RESTART_REASONS.reduce((n, reason) => n + this.#restarts[reason], 0);
  }

  /** The restarts by reason. */
  get restartsByReason(): WatchRestarts {
    return { ...this.#restarts };
  }

  get kind(): string {
    return this.#o.type.kind;
  }

  list(): KubeObject[] {
    return [...this.#store.values()];
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    this.#wake?.('stopped');
    await this.#loop;
  }

  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#abort.signal.aborted) {
      try {
        const list = await this.#kube.list(this.#o.type, this.#scope());
        this.#replace(list.items);
        this.#synced = true;
        failures = 0;
        const end = await this.#watch(list.resourceVersion);
        if (end === 'stopped') return;
        this.#restarts[end]++;
        this.#o.log.debug('watch restarting', { kind: this.#o.type.kind, why: end });
        if (end === 'stalled' || end === 'failed')
          this.#o.log.info('watch restarted', { kind: this.#o.type.kind, why: end });
      } catch (e) {
        failures++;
        const delay = Math.min(
          this.#o.maxBackoffMs ?? INFORMER_DEFAULTS.maxBackoffMs,
          (this.#o.baseBackoffMs ?? INFORMER_DEFAULTS.baseBackoffMs) * 2 ** Math.min(failures - 1, 20),
        );
        this.#o.log.warn('list failed', { kind: this.#o.type.kind, error: e, retryInMs: delay });
        await sleep(this.#o.clock, delay, this.#abort.signal);
      }
    }
  }

  #scope(): { namespace?: string; labelSelector?: string } {
    return {
      ...(this.#o.namespace === undefined ? {} : { namespace: this.#o.namespace }),
      ...(this.#o.labelSelector === undefined ? {} : { labelSelector: this.#o.labelSelector }),
    };
  }

  /** Replace the cache with a fresh list, emitting what changed since the last one. */
  #replace(items: readonly KubeObject[]): void {
    const keep = this.#o.keep ?? ((o: KubeObject) => o);
    const fresh = new Map(items.map((o) => [storeKey(o), keep(o)]));
    for (const [key, old] of this.#store) {
      if (!fresh.has(key)) {
        this.#store.delete(key);
        this.#handler('DELETED', old);
      }
    }
    for (const [key, o] of fresh) {
      const old = this.#store.get(key);
      this.#store.set(key, o);
      if (old === undefined) this.#handler('ADDED', o);
      else if (old.metadata.resourceVersion !== o.metadata.resourceVersion) this.#handler('MODIFIED', o);
    }
  }

  #apply(event: WatchEvent): void {
    if (event.type === 'BOOKMARK') return;
    const object = this.#o.keep?.(event.object) ?? event.object;
    const key = storeKey(object);
    if (event.type === 'DELETED') this.#store.delete(key);
    else this.#store.set(key, object);
    this.#handler(event.type, object);
  }

  /** Watch from `resourceVersion` until the watch ends, stalls, a relist is due, or stop. */
  async #watch(resourceVersion: string): Promise<WatchEnd> {
    const { clock } = this.#o;
    const stallMs = this.#o.stallTimeoutMs ?? INFORMER_DEFAULTS.stallTimeoutMs;
    let wake: (end: WatchEnd) => void = () => undefined;
    const ended = new Promise<WatchEnd>((resolve) => (wake = resolve));
    let active = true;
    let lastEvent = clock.now();
    const handle = await this.#kube.watch(this.#o.type, { ...this.#scope(), resourceVersion }, (event) => {
      if (!active) return; // a late event of a watch already given up
      lastEvent = clock.now();
      this.#apply(event);
    });
    handle.done.then(
      () => wake('closed'),
      (e: unknown) => {
        this.#o.log.debug('watch ended with an error', { kind: this.#o.type.kind, error: e });
        wake(isExpired(e) ? 'expired' : 'failed');
      },
    );
    const timers: TimerHandle[] = [
      clock.setTimer(() => wake('relist'), this.#o.relistIntervalMs ?? INFORMER_DEFAULTS.relistIntervalMs),
    ];
    const checkStall = (): void => {
      if (clock.now() - lastEvent >= stallMs) wake('stalled');
      else timers.push(clock.setTimer(checkStall, lastEvent + stallMs - clock.now()));
    };
    timers.push(clock.setTimer(checkStall, stallMs));
    this.#wake = wake;
    if (this.#abort.signal.aborted) wake('stopped');
    const end = await ended;
    active = false;
    this.#wake = undefined;
    for (const t of timers) t.cancel();
    handle.stop();
    return end;
  }
}
