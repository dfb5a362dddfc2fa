// Which controller replicas lead. Every replica runs external-provisioner and external-resizer, each
// with leader election on a Lease of its own in the operator's namespace: the provisioner's
// (provisionerLeaseName(): the driver name with '.' and '/' replaced by '-') picks the only replica
// that creates and deletes volumes, the resizer's (resizerLeaseName(): that name prefixed with
// 'external-resizer-') the only one that grows them. The two sidecars elect independently, so the
// holders can be different pods; the others stand by with the whole node registry. A Lease's
// holderIdentity is the holder's host name, i.e. its pod name. A holder whose Lease ran out
// (renewTime + leaseDurationSeconds in the past: it died and no standby has taken over yet) is not
// reported. The times are the holder's clock, not ours: with skew between the nodes the expiry is
// off by that much, which only shifts when the status stops naming a dead pod; the next holder
// change is an informer event anyway.
import type { KubeObject } from '../kube/kube-port.js';

interface LeaseSpec {
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
  readonly acquireTime?: string | Date;
  readonly renewTime?: string | Date;
}

const specOf = (lease: KubeObject): LeaseSpec => (lease as { spec?: LeaseSpec }).spec ?? {};

/** The holder named in `lease`, expired or not; undefined when nobody holds it. */
export function leaseHolderIdentity(lease: KubeObject | undefined): string | undefined {
  const holder = lease === undefined ? undefined : specOf(lease).holderIdentity;
  return holder === undefined || holder === '' ? undefined : holder;
}

/** Milliseconds since the epoch of a MicroTime (RFC 3339 with six fractional digits), or undefined. */
function timeOf(value: string | Date | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The pod that holds `lease` at `now` (ms), or undefined when nobody does or the Lease ran out. */
export function activeController(lease: KubeObject | undefined, now: number): string | undefined {
  const holder = leaseHolderIdentity(lease);
  if (lease === undefined || holder === undefined) return undefined;
  const spec = specOf(lease);
  const renewed = timeOf(spec.renewTime ?? spec.acquireTime);
  const duration = spec.leaseDurationSeconds;
  if (renewed === undefined || duration === undefined) return undefined;
  return now <= renewed + duration * 1000 ? holder : undefined;
}

/** The pods that hold the provisioner's and the resizer's Lease; a role nobody holds is absent. */
export interface ActiveReplicas {
  readonly provisioner?: string;
  readonly resizer?: string;
}

/** Both leaders at `now` (ms) from the two Leases (undefined: no such Lease), by activeController's rules. */
export function activeReplicas(
  leases: { readonly provisioner: KubeObject | undefined; readonly resizer: KubeObject | undefined },
  now: number,
): ActiveReplicas {
  const provisioner = activeController(leases.provisioner, now);
  const resizer = activeController(leases.resizer, now);
  return {
    ...(provisioner === undefined ? {} : { provisioner }),
    ...(resizer === undefined ? {} : { resizer }),
  };
}
