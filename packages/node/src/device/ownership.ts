// Which node driver owns a PMEM region (issue 32): one driver instance manages a region's PMEM, and
// a second one on the same node — another PmemCSIDeployment whose node selector overlaps, or a
// kustomize/Helm install without the operator — refuses what the first one took, also when no
// operator keeps it off the node.
//
// An instance is a driver name: it names the PmemCSIDeployment, the cluster-wide CSIDriver object,
// the kubelet plugin directory and /var/lib/<driver>, so two instances in one cluster never share
// it, and one instance keeps it across restarts and upgrades. What an instance takes, it marks:
// - its volume groups (lvm mode) carry the LVM tag `pmem-csi.intel.com/owner=<driver name>`
//   (LVM tags allow A-Z a-z 0-9 _ + . - / = ! : # &, up to 1024 characters, no leading '-'; a
//   driver name is a DNS subdomain, so it fits);
// - its namespaces (lvm's "pmem-csi", direct mode's volumes) get a namespace uuid that carries the
//   owner mark, the first 40 bits of SHA-256(driver name), behind a fixed prefix in a version-8
//   UUID. The name field cannot hold it: direct mode's volume ids fill its 63 bytes. The kernel keeps
//   the uuid in the namespace label; `ndctl list -v` shows it as raw_uuid.
// Unmarked PMEM (the Go driver's, or this driver's before the marks) claims nothing: a driver adopts
// the volume group of a region it may use by tagging it, once; an unmarked namespace cannot be
// re-marked under its data (its uuid is in the label) and stays usable by whoever has it. A marked
// resource of another instance is never used, changed or deleted. A region that holds marks of
// several instances (two drivers that started on the same blank region at the same moment) belongs
// to the instance whose mark sorts first: every instance computes that alike from what the PMEM
// says, so exactly one of them goes on allocating there, whichever looked first.
import { createHash, randomBytes } from 'node:crypto';
import { DEFAULT_DRIVER_NAME } from '@pmem-csi/api';
import { FailedPreconditionError, InvalidArgumentError } from '@pmem-csi/csi';
import type { VolumeGroup } from './lvm-tools.js';
import type { NdNamespace } from './ndctl.js';

/** LVM tag prefix of a volume group's owner: `pmem-csi.intel.com/owner=<driver name>`. */
export const OWNER_TAG_PREFIX = 'pmem-csi.intel.com/owner=';
/** First group of every marked namespace uuid ("pmem" in ASCII). */
export const MARKED_UUID_PREFIX = '706d656d';
/** Hex digits of an owner mark (40 bits of SHA-256 of the driver name). */
export const OWNER_MARK_DIGITS = 10;

const LVM_TAG_CHARS = /^[A-Za-z0-9_+.\-/=!:#&]+$/;
const LVM_TAG_MAX = 1024;
// 706d656d-MMMM-8MMM-8MMM-<12 random hex>: version 8 (custom), variant 10xx.
const MARKED_UUID = /^706d656d-([0-9a-f]{4})-8([0-9a-f]{3})-8([0-9a-f]{3})-[0-9a-f]{12}$/i;

/** The owner mark of a driver name: the first 40 bits of its SHA-256, in hex. */
export function ownerMark(driverName: string): string {
  return createHash('sha256').update(driverName).digest('hex').slice(0, OWNER_MARK_DIGITS);
}

/** The owner mark a namespace uuid carries; undefined for any other uuid (unmarked). */
export function uuidMark(uuid: string | undefined): string | undefined {
  const m = uuid === undefined ? null : MARKED_UUID.exec(uuid);
  return m === null ? undefined : `${m[1]}${m[2]}${m[3]}`.toLowerCase();
}

/** The driver names in a volume group's owner tags. */
export function tagOwners(tags: readonly string[]): string[] {
  return tags.filter((t) => t.startsWith(OWNER_TAG_PREFIX)).map((t) => t.slice(OWNER_TAG_PREFIX.length));
}

/** This driver instance as its PMEM marks say it. */
export class PmemOwner {
  readonly mark: string;
  readonly tag: string;

  /** @throws InvalidArgumentError when the driver name cannot be an LVM tag */
  constructor(readonly driverName: string = DEFAULT_DRIVER_NAME) {
    this.tag = `${OWNER_TAG_PREFIX}${driverName}`;
    if (!LVM_TAG_CHARS.test(driverName) || this.tag.length > LVM_TAG_MAX) {
      throw new InvalidArgumentError(
        `driver name ${JSON.stringify(driverName)} cannot mark PMEM: the LVM tag ${OWNER_TAG_PREFIX}<driver name> allows letters, digits and "_+.-/=!:#&", at most ${LVM_TAG_MAX} characters in all`,
      );
    }
    this.mark = ownerMark(driverName);
  }

  /** A new namespace uuid carrying this owner's mark; `random` = 12 hex digits (default: random). */
  namespaceUuid(random: string = randomBytes(6).toString('hex')): string {
    const m = this.mark;
    return `${MARKED_UUID_PREFIX}-${m.slice(0, 4)}-8${m.slice(4, 7)}-8${m.slice(7, 10)}-${random}`;
  }

  /** Whether a namespace is this owner's or unmarked, i.e. not another instance's. */
  mayUse(ns: NdNamespace): boolean {
    const mark = namespaceMark(ns);
    return mark === undefined || mark === this.mark;
  }
}

/** The owner mark of a namespace (its own uuid: raw_uuid, else uuid); undefined when unmarked. */
export function namespaceMark(ns: NdNamespace): string | undefined {
  return uuidMark(ns.rawUuid ?? ns.uuid);
}

/** One resource that says who owns a region. */
export interface Claim {
  readonly mark: string;
  /** The owner's driver name where the PMEM says it (a volume group's tag). */
  readonly driverName?: string;
  /** What carries the claim: `volume group <vg>`, `namespace <dev> "<name>"`. */
  readonly resource: string;
}

/** The claim a namespace makes: marked and not destroyed (an idle seed of size 0 holds nothing). */
export function namespaceClaim(ns: NdNamespace): Claim | undefined {
  const mark = namespaceMark(ns);
  if (mark === undefined || ns.size === 0) return undefined;
  return { mark, resource: `namespace ${ns.dev}${ns.name === undefined ? '' : ` ${JSON.stringify(ns.name)}`}` };
}

/** The claims a volume group's owner tags make. */
export function vgClaims(vg: VolumeGroup): Claim[] {
  return tagOwners(vg.tags).map((driverName) => ({
    mark: ownerMark(driverName),
    driverName,
    resource: `volume group ${vg.name}`,
  }));
}

/** A region this driver may not allocate in, and who owns it. */
export interface Refusal {
  readonly region: string;
  readonly ownerMark: string;
  /** The owner's driver name, when one of its claims says it. */
  readonly owner: string | undefined;
  /** The resources that carry the owner's claim. */
  readonly resources: readonly string[];
}

/**
 * Judge a region by its claims: nobody's, or this driver's by the first mark → undefined (it may
 * allocate there); otherwise the refusal naming the owner (the claims' mark that sorts first).
 */
export function judgeRegion(self: PmemOwner, region: string, claims: readonly Claim[]): Refusal | undefined {
  const winner = [...new Set(claims.map((c) => c.mark))].sort()[0];
  if (winner === undefined || winner === self.mark) return undefined;
  const theirs = claims.filter((c) => c.mark === winner);
  return {
    region,
    ownerMark: winner,
    owner: theirs.find((c) => c.driverName !== undefined)?.driverName,
    resources: [...new Set(theirs.map((c) => c.resource))],
  };
}

/** "driver pmem-csi.intel.com" where the PMEM names it, else "the driver with owner mark <mark>". */
export function describeOwner(r: Refusal): string {
  return r.owner === undefined ? `the driver with owner mark ${r.ownerMark}` : `driver ${r.owner}`;
}

/** The log fields of a refusal (log line "region refused: ..."). */
export function refusalFields(r: Refusal): Record<string, string | readonly string[]> {
  return { region: r.region, owner: describeOwner(r), ownerMark: r.ownerMark, resources: r.resources };
}

/** The start-up failure when other drivers own every region this one could use. */
export function pmemOwnedByOthers(self: PmemOwner, refusals: readonly Refusal[]): FailedPreconditionError {
  const regions = refusals.map((r) => `${r.region} belongs to ${describeOwner(r)} (${r.resources.join(', ')})`);
  return new FailedPreconditionError(
    `no PMEM on this node is left for driver ${self.driverName} (owner mark ${self.mark}): ${regions.join('; ')}. ` +
      "One driver manages a region's PMEM: keep this driver off this node (its node selector), or free the regions " +
      "by deleting the other driver's volumes, namespaces and volume groups there",
  );
}

/**
 * Logs each refusal once while it lasts (the same refusal found by every later create or capacity
 * query stays quiet; a region that changes owner, or comes back, is news).
 */
export class RefusalLog {
  readonly #known = new Map<string, string>();

  constructor(readonly warn: (msg: string, fields: Record<string, unknown>) => void) {}

  /** Report the refusals found now among `regions` (the regions judged this time). */
  report(regions: readonly string[], refusals: readonly Refusal[]): void {
    for (const region of regions) if (!refusals.some((r) => r.region === region)) this.#known.delete(region);
    for (const r of refusals) {
      const key = JSON.stringify(r);
      if (this.#known.get(r.region) === key) continue;
      this.#known.set(r.region, key);
      this.warn('region refused: its PMEM belongs to another PMEM-CSI driver, which this one never touches', {
        ...refusalFields(r),
      });
    }
  }
}
