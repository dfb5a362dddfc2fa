// Leader election between operator replicas with a coordination.k8s.io/v1 Lease, as client-go
// does it: a candidate takes the Lease when it is free, released, or not renewed for a whole
// lease duration as observed on the candidate's own clock (never by comparing clocks across
// machines); the leader renews it every retry period and gives up leadership when it could not
// renew within the renew deadline, which is shorter than the lease duration, so the old leader
// has stopped before anyone else may start. Writes use the Lease's resourceVersion, so of two
// candidates racing for it exactly one wins.
import type { Logger } from '@pmem-csi/runtime';
import { sleep, type Clock } from '../clock.js';
import { isConflict } from '../kube/kube-errors.js';
import type { KubeApi, LeaseRecord } from '../kube/kube-port.js';

export interface LeaderElectionOptions {
  readonly kube: KubeApi;
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica (pod name + random suffix). */
  readonly identity: string;
  readonly clock: Clock;
  readonly log: Logger;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
}

export const LEADER_ELECTION_DEFAULTS = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const;

export interface LeaderCallbacks {
  /** Called once when this replica becomes leader. */
  onStartedLeading(): void;
  /** Called once when leadership is lost (not on a voluntary stop). */
  onStoppedLeading(): void;
}

export class LeaderElector {
  readonly #o: LeaderElectionOptions;
  readonly #leaseMs: number;
  readonly #deadlineMs: number;
  readonly #retryMs: number;
  readonly #abort = new AbortController();
  #leader = false;
  #lastRenew = 0;
  /** The other holder's record as last seen, and when it was first seen unchanged. */
  #observed: { resourceVersion: string | undefined; at: number } = { resourceVersion: undefined, at: 0 };
  #loop: Promise<void> | undefined;

  constructor(options: LeaderElectionOptions) {
    this.#o = options;
    this.#leaseMs = options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs;
    this.#deadlineMs = options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs;
    this.#retryMs = options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs;
  }

  get isLeader(): boolean {
    return this.#leader;
  }

  /** Run the election loop until stop(). */
  start(callbacks: LeaderCallbacks): void {
    this.#loop ??= this.#run(callbacks);
  }

  /** Stop campaigning; a leader releases the Lease so that another replica takes over at once. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
    if (this.#leader) {
      this.#leader = false;
      await this.#release();
    }
  }

  async #run(callbacks: LeaderCallbacks): Promise<void> {
    while (!this.#abort.signal.aborted) {
      const ok = await this.#tryAcquireOrRenew();
      const now = this.#o.clock.now();
      if (ok) {
        this.#lastRenew = now;
        if (!this.#leader) {
          this.#leader = true;
          this.#o.log.info('became leader', { lease: this.#o.name, identity: this.#o.identity });
          callbacks.onStartedLeading();
        }
      } else if (this.#leader && now - this.#lastRenew >= this.#deadlineMs) {
        this.#leader = false;
        this.#o.log.error('lost leadership: could not renew the lease in time', {
          lease: this.#o.name,
          identity: this.#o.identity,
        });
        callbacks.onStoppedLeading();
      }
      await sleep(this.#o.clock, this.#retryMs, this.#abort.signal);
    }
  }

  #record(lease: LeaseRecord | undefined, now: number): LeaseRecord {
    const ours = lease?.holderIdentity === this.#o.identity;
    return {
      name: this.#o.name,
      namespace: this.#o.namespace,
      holderIdentity: this.#o.identity,
      leaseDurationSeconds: Math.ceil(this.#leaseMs / 1000),
      acquireTime: ours && lease?.acquireTime !== undefined ? lease.acquireTime : new Date(now),
      renewTime: new Date(now),
      leaseTransitions: (lease?.leaseTransitions ?? 0) + (ours || lease === undefined ? 0 : 1),
      ...(lease?.resourceVersion === undefined ? {} : { resourceVersion: lease.resourceVersion }),
    };
  }

  /** True when this replica holds the Lease afterwards. */
  async #tryAcquireOrRenew(): Promise<boolean> {
    const { kube, namespace, name } = this.#o;
    const now = this.#o.clock.now();
    try {
      const lease = await kube.getLease(namespace, name);
      if (lease === undefined) {
        await kube.createLease(this.#record(undefined, now));
        return true;
      }
      if (this.#heldByOther(lease, now)) return false;
      await kube.updateLease(this.#record(lease, now));
      return true;
    } catch (e) {
      if (!isConflict(e)) this.#o.log.warn('leader election: lease request failed', { lease: name, error: e });
      return false;
    }
  }

  #heldByOther(lease: LeaseRecord, now: number): boolean {
    const holder = lease.holderIdentity ?? '';
    if (holder === '' || holder === this.#o.identity) return false;
    if (lease.resourceVersion !== this.#observed.resourceVersion)
      this.#observed = { resourceVersion: lease.resourceVersion, at: now };
    const durationMs = (lease.leaseDurationSeconds ?? Math.ceil(this.#leaseMs / 1000)) * 1000;
    return now - this.#observed.at < durationMs;
  }

  async #release(): Promise<void> {
    const { kube, namespace, name } = this.#o;
    try {
      const lease = await kube.getLease(namespace, name);
      if (lease?.holderIdentity !== this.#o.identity) return;
      const now = new Date(this.#o.clock.now());
      await kube.updateLease({ ...lease, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now });
      this.#o.log.info('released leadership', { lease: name, identity: this.#o.identity });
    } catch (e) {
      this.#o.log.warn('leader election: releasing the lease failed', { lease: name, error: e });
    }
  }
}
