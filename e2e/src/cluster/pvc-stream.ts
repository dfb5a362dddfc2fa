// A steady stream of PersistentVolumeClaims for the failover scenarios (cluster tier and real node):
// one PVC created every `everyMs`, each deleted `deleteAfterMs` after it was first seen Bound. The
// time each was asked for and first seen Bound is recorded, so a test can say when provisioning
// resumed after a kill: the first PVC *asked for after* the kill that became Bound.
import { provisionerLeaseName } from '@pmem-csi/api';
import type { Kube, KubeObject, Ref } from './kube.js';
import type { Claim, PersistentVolume } from './storage.js';
import { sleep, waitFor } from './wait.js';

export interface StreamEvent {
  /** When the create was sent (one sent before a kill never counts as after it). */
  readonly createdAt: number;
  boundAt?: number;
  volume?: string;
}

export interface PvcStreamOptions {
  readonly kube: Kube;
  readonly namespace: string;
  readonly storageClass: string;
  /** Requested size, e.g. '16Mi'. */
  readonly size: string;
  /** Value of the `stream` label on every PVC of this stream. */
  readonly label: string;
  /** A new PVC every this many ms (default 500). */
  readonly everyMs?: number;
  /** Delete a PVC this long after it was first seen Bound (default 3000). */
  readonly deleteAfterMs?: number;
}

const POLL_MS = 250;

export class PvcStream {
  readonly claims = new Map<string, StreamEvent>();
  /** Errors of the stream's own API calls (a create or delete refused): a test expects none. */
  readonly errors: string[] = [];
  readonly #o: Required<PvcStreamOptions>;
  #running = false;
  #next = 0;
  #loop: Promise<void> | undefined;

  constructor(options: PvcStreamOptions) {
    this.#o = { everyMs: 500, deleteAfterMs: 3000, ...options };
  }

  get selector(): string {
    return `stream=${this.#o.label}`;
  }

  claimRef(name: string): Ref {
    return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name, namespace: this.#o.namespace };
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }

  /** How many PVCs were seen Bound. */
  bound(): number {
    return [...this.claims.values()].filter((c) => c.boundAt !== undefined).length;
  }

  /** The first PVC created after `t` that is Bound, as ms after `t`. */
  resumedAfter(t: number): number | undefined {
    const bound = [...this.claims.values()].filter((c) => c.createdAt > t && c.boundAt !== undefined);
    return bound.length === 0 ? undefined : Math.min(...bound.map((c) => (c.boundAt ?? 0) - t));
  }

  /** The stream's PVCs as they are now. */
  list(): Promise<Claim[]> {
    return this.#o.kube.list<Claim>('v1', 'PersistentVolumeClaim', {
      namespace: this.#o.namespace,
      labelSelector: this.selector,
    });
  }

  /** After stop(): wait until every PVC left is Bound or being deleted (none failed for good); returns them. */
  settled(timeoutMs: number, describe?: () => Promise<string> | string): Promise<Claim[]> {
    let last: Claim[] = [];
    return waitFor(
      'every stream PVC to be Bound',
      async () => {
        last = await this.list();
        return last.every((c) => c.status?.phase === 'Bound' || c.metadata.deletionTimestamp !== undefined)
          ? last
          : undefined;
      },
      {
        timeoutMs,
        describe: async () =>
          `${last
            .filter((c) => c.status?.phase !== 'Bound')
            .map((c) => `${c.metadata.name}: ${c.status?.phase ?? '-'}`)
            .join(', ')}; ${(await describe?.()) ?? ''}`,
      },
    );
  }

  /** Delete every PVC of the stream. */
  async deleteAll(): Promise<void> {
    for (const c of await this.list()) await this.#o.kube.delete(this.claimRef(c.metadata.name));
  }

  async #run(): Promise<void> {
    const ticksPerCreate = Math.max(1, Math.round(this.#o.everyMs / POLL_MS));
    for (let tick = 0; this.#running; tick++) {
      try {
        if (tick % ticksPerCreate === 0) {
          const name = `stream-${String(this.#next++).padStart(3, '0')}`;
          const createdAt = Date.now();
          await this.#o.kube.create(this.#claim(name));
          this.claims.set(name, { createdAt });
        }
        await this.#observe();
      } catch (e) {
        this.errors.push(e instanceof Error ? e.message : String(e));
      }
      await sleep(POLL_MS);
    }
  }

  #claim(name: string): KubeObject {
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: this.#o.namespace, labels: { stream: this.#o.label } },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: this.#o.storageClass,
        resources: { requests: { storage: this.#o.size } },
      },
    } as KubeObject;
  }

  async #observe(): Promise<void> {
    const now = Date.now();
    for (const c of await this.list()) {
      const seen = this.claims.get(c.metadata.name);
      if (seen === undefined || c.status?.phase !== 'Bound') continue;
      if (seen.boundAt === undefined) {
        seen.boundAt = now;
        seen.volume = c.spec.volumeName;
      } else if (now - seen.boundAt > this.#o.deleteAfterMs && c.metadata.deletionTimestamp === undefined) {
        await this.#o.kube.delete(this.claimRef(c.metadata.name));
      }
    }
  }
}

/** The PersistentVolumes of CSI driver `driver`. */
export async function volumesOf(kube: Kube, driver: string): Promise<PersistentVolume[]> {
  return (await kube.list<PersistentVolume>('v1', 'PersistentVolume')).filter((pv) => pv.spec.csi?.driver === driver);
}

/** Wait until every PersistentVolume of `driver` is Bound (deletions done: none Released or Failed); returns them. */
export function settledVolumes(kube: Kube, driver: string, timeoutMs: number): Promise<PersistentVolume[]> {
  return waitFor(
    `the PVs of ${driver} to settle (every one left Bound)`,
    async () => {
      const all = await volumesOf(kube, driver);
      return all.every((pv) => pv.status?.phase === 'Bound') ? all : undefined;
    },
    {
      timeoutMs,
      describe: async () =>
        (await volumesOf(kube, driver)).map((p) => `${p.metadata.name}:${p.status?.phase ?? '-'}`).join(' '),
    },
  );
}

/** Wait until `driver` has no PersistentVolume left. */
export async function volumesGone(
  kube: Kube,
  driver: string,
  timeoutMs: number,
  describe?: () => Promise<string> | string,
): Promise<void> {
  await waitFor(
    `every PV of ${driver} to be deleted`,
    async () => ((await volumesOf(kube, driver)).length === 0 ? true : undefined),
    { timeoutMs, ...(describe === undefined ? {} : { describe }) },
  );
}

/** external-provisioner's leader-election Lease of `driver` in `namespace`. */
export const provisionerLeaseRef = (namespace: string, driver: string): Ref => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  name: provisionerLeaseName(driver),
  namespace,
});

/** The Lease's holder (external-provisioner's identity: its host name, in a pod the pod name), if any. */
export async function leaseHolder(kube: Kube, lease: Ref): Promise<string | undefined> {
  const holder = (await kube.get<KubeObject & { spec?: { holderIdentity?: string } }>(lease))?.spec?.holderIdentity;
  return holder === undefined || holder === '' ? undefined : holder;
}
