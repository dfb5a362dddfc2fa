// Direct device mode: one namespace per volume, named after the volume id (as the Go driver did):
// fsdax with page metadata on the PMEM (--map=dev) for AppDirect, sector mode for FileIO.
// Ownership rule: only namespaces whose name has the shape of our volume ids
// (<up to 6 chars>-<56 hex digits of sha224>) are ours; every other namespace — the lvm mode's
// "pmem-csi", an application's — is never listed, touched or destroyed. A caller with other
// records (node state) can widen this with `isOwnedName`.
// Among driver instances (ownership.ts): every namespace it creates carries its owner mark in the
// namespace uuid; a namespace another instance marked is not ours whatever its name, and a region
// that holds another instance's marked namespaces is refused for new volumes and left out of the
// capacity — judged again at every create and capacity query, since another driver on the node may
// mark a free region at any time.
// Namespaces are contiguous, so free space fragments: capacity and placement use each region's
// max_available_extent, aligned down, minus the fsdax metadata reserve (see sizes.ts).
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { SerialQueue, requireTools, type CommandRunner, type Logger } from '@pmem-csi/runtime';
import {
  type Capacity,
  FailedPreconditionError,
  InternalError,
  InvalidArgumentError,
  UnimplementedError,
} from '@pmem-csi/csi';
import { alignDown, alignUp, assertVolumeSize, notEnoughSpace, usableForRaw } from './sizes.js';
import {
  DeviceExistsError,
  DeviceNotFoundError,
  type AllocationOptions,
  type CreateDeviceRequest,
  type DeviceCallOptions,
  type DeviceManager,
  type PmemDeviceInfo,
} from './device-manager.js';
import {
  NAMESPACE_NAME_MAX_BYTES,
  choosePlacement,
  isDestroyed,
  isVolumeIdName,
  maxVolumeSize,
  usableInExtent,
  type Placement,
} from './direct-layout.js';
import { initLabelsIfSafe } from './label-init.js';
import { readMountinfo, stackAt } from './mountinfo.js';
import { Ndctl, labelLessNamespace, type NdNamespace, type NdRegion } from './ndctl.js';
import {
  PmemOwner,
  RefusalLog,
  judgeRegion,
  namespaceClaim,
  namespaceMark,
  pmemOwnedByOthers,
  type Refusal,
} from './ownership.js';
import { errnoCode, hostBlockDevices, isUnused, zeroDevice, type BlockDeviceAccess } from './wipe.js';

const NEED_SYS =
  'direct mode needs /sys mounted read-write in the container (ndctl creates and destroys namespaces by ' +
  'writing sysfs): mount the host /sys read-write into a privileged container';

/**
 * Start-up check for direct mode: /sys must be writable, or every namespace operation fails (the Go
 * driver crash-looped silently there). Reads the /sys entry of mountinfo, then tries W_OK on the
 * NVDIMM bus directory (absent when the kernel has no NVDIMM support: not this check's concern).
 * @throws FailedPreconditionError naming what is wrong
 */
export async function checkSysWritable(paths: { mountinfo?: string; ndBus?: string } = {}): Promise<void> {
  const mountinfo = paths.mountinfo ?? '/proc/self/mountinfo';
  const ndBus = paths.ndBus ?? '/sys/bus/nd';
  const sys = stackAt(await readMountinfo(undefined, mountinfo), '/sys').at(-1);
  if (sys === undefined)
    throw new FailedPreconditionError(`${NEED_SYS}; nothing is mounted on /sys (per ${mountinfo})`);
  if (sys.vfsOptions.includes('ro') || sys.fsOptions.includes('ro'))
    throw new FailedPreconditionError(`${NEED_SYS}; /sys is mounted read-only (${sys.vfsOptions.join(',')})`);
  try {
    await access(ndBus, constants.W_OK);
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT') return;
    if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM')
      throw new FailedPreconditionError(`${NEED_SYS}; ${ndBus} is not writable (${code})`);
    throw e;
  }
}

export interface DirectDeviceManagerOptions {
  readonly runner: CommandRunner;
  readonly log: Logger;
  readonly blockDevices?: BlockDeviceAccess;
  /** Initialize labels of label-less regions when provably unused (default true). */
  readonly autoInitLabels?: boolean;
  /** Ownership rule for namespace names (default: `isVolumeIdName`). */
  readonly isOwnedName?: (name: string) => boolean;
  /** Start-up /sys check (default: `checkSysWritable()`). */
  readonly checkSys?: () => Promise<void>;
  /** The driver instance whose PMEM this is (default: pmem-csi.intel.com); see ownership.ts. */
  readonly owner?: PmemOwner;
}

export class DirectDeviceManager implements DeviceManager {
  readonly mode = 'direct' as const;
  readonly #runner: CommandRunner;
  readonly #log: Logger;
  readonly #ndctl: Ndctl;
  readonly #devices: BlockDeviceAccess;
  readonly #autoInitLabels: boolean;
  readonly #isOwnedName: (name: string) => boolean;
  readonly #checkSys: () => Promise<void>;
  readonly #owner: PmemOwner;
  readonly #refusals: RefusalLog;
  readonly #queue = new SerialQueue();

  constructor(options: DirectDeviceManagerOptions) {
    this.#runner = options.runner;
    this.#log = options.log.child({ deviceMode: 'direct' });
    this.#ndctl = new Ndctl(options.runner);
    this.#devices = options.blockDevices ?? hostBlockDevices;
    this.#autoInitLabels = options.autoInitLabels ?? true;
    this.#isOwnedName = options.isOwnedName ?? isVolumeIdName;
    this.#checkSys = options.checkSys ?? (() => checkSysWritable());
    this.#owner = options.owner ?? new PmemOwner();
    this.#refusals = new RefusalLog((msg, fields) => this.#log.warn(msg, fields));
  }

  #owned(ns: NdNamespace): ns is NdNamespace & { name: string } {
    return ns.name !== undefined && this.#isOwnedName(ns.name) && !isDestroyed(ns) && this.#owner.mayUse(ns);
  }

  /** The regions this driver may create volumes in; the others are refused (and reported once). */
  #judge(
    regions: readonly NdRegion[],
    namespaces: readonly NdNamespace[],
  ): { usable: NdRegion[]; refusals: Refusal[] } {
    const refusals = regions.flatMap((r) => {
      const claims = namespaces.filter((ns) => ns.region === r.dev).flatMap((ns) => namespaceClaim(ns) ?? []);
      return judgeRegion(this.#owner, r.dev, claims) ?? [];
    });
    this.#refusals.report(
      regions.map((r) => r.dev),
      refusals,
    );
    return { usable: regions.filter((r) => !refusals.some((x) => x.region === r.dev)), refusals };
  }

  /**
   * Label initialisation of blank regions, and the ownership check: when other drivers own every
   * region and this one has no volume on the node, it fails naming them.
   * @throws FailedPreconditionError (/sys read-only, missing tools, every region another driver's)
   */
  async setup(options: DeviceCallOptions = {}): Promise<void> {
    await this.#checkSys();
    requireTools(this.#runner, ['ndctl', 'dd', ...(this.#autoInitLabels ? ['blkid'] : [])], 'direct device mode');
    await this.#queue.run(async () => {
      const regions = (await this.#ndctl.listRegions(options)).filter((r) => r.type === 'pmem');
      if (regions.length === 0) this.#log.warn('no PMEM regions found: this node offers no capacity');
      else
        this.#log.info('PMEM this driver takes is marked as its own', {
          driver: this.#owner.driverName,
          ownerMark: this.#owner.mark,
        });
      const namespaces = await this.#ndctl.listNamespaces({}, options);
      const { usable, refusals } = this.#judge(
        regions.filter((r) => r.enabled),
        namespaces,
      );
      if (refusals.length > 0 && usable.length === 0 && !namespaces.some((ns) => this.#owned(ns)))
        throw pmemOwnedByOthers(this.#owner, refusals);
      for (const region of regions.filter((r) => r.enabled)) {
        if (labelLessNamespace(namespaces.filter((ns) => ns.region === region.dev)) === undefined) continue;
        const deps = {
          ndctl: this.#ndctl,
          runner: this.#runner,
          log: this.#log,
          isUnused: (p: string) => isUnused(this.#devices, p),
        };
        const ready = this.#autoInitLabels && (await initLabelsIfSafe(region, { regions, namespaces }, deps, options));
        if (!ready)
          this.#log.warn('region unusable until its namespace labels are initialized', { region: region.dev });
      }
    });
  }

  /** Enabled PMEM regions no other driver owns, judged by the namespaces listed now (or given). */
  async #usableRegions(o: DeviceCallOptions, listed?: readonly NdNamespace[]): Promise<NdRegion[]> {
    const regions = (await this.#ndctl.listRegions(o)).filter((r) => r.type === 'pmem' && r.enabled);
    return this.#judge(regions, listed ?? (await this.#ndctl.listNamespaces({}, o))).usable;
  }

  async createDevice(req: CreateDeviceRequest, options: DeviceCallOptions = {}): Promise<PmemDeviceInfo> {
    if (!this.#isOwnedName(req.volumeId)) {
      throw new InvalidArgumentError(
        `volume id ${JSON.stringify(req.volumeId)} is not a valid direct-mode namespace name (expected <up to 6 chars>-<56 hex digits>, at most ${NAMESPACE_NAME_MAX_BYTES} bytes)`,
      );
    }
    assertVolumeSize(req.size);
    const mode = req.usage === 'FileIO' ? 'sector' : 'fsdax';
    return this.#queue.run(async () => {
      const namespaces = await this.#ndctl.listNamespaces({}, options);
      const existing = namespaces.find((ns) => ns.name === req.volumeId && !isDestroyed(ns));
      if (existing !== undefined) throw this.#exists(req.volumeId, existing);
      const regions = await this.#usableRegions(options, namespaces);
      const placement = choosePlacement(regions, req.size);
      if (placement === undefined) throw notEnoughSpace(req.volumeId, req.size, maxVolumeSize(regions));
      const ns = await this.#createVerified(placement, { name: req.volumeId, size: req.size, mode }, options);
      try {
        const info = toInfo(ns);
        if (info === undefined)
          throw new InternalError(`namespace ${ns.dev} of volume ${req.volumeId} has no block device`);
        await zeroDevice(this.#runner, { path: info.path }, options.signal);
        this.#log.debug('volume created', { volumeId: req.volumeId, namespace: ns.dev, size: ns.size, mode });
        return info;
      } catch (e) {
        await this.#ndctl.destroyNamespace(ns.dev, options);
        throw e;
      }
    });
  }

  /** A volume id taken by a namespace: ours, or (named so) another driver's. */
  #exists(volumeId: string, ns: NdNamespace): DeviceExistsError {
    if (this.#owner.mayUse(ns)) return new DeviceExistsError(`volume ${volumeId} already exists`);
    return new DeviceExistsError(
      `volume ${volumeId} already exists as namespace ${ns.dev} of another PMEM-CSI driver (owner mark ${namespaceMark(ns) ?? ''}), which this driver does not touch`,
    );
  }

  /**
   * Create the namespace and check the usable size the kernel reports. Our reserve bound should
   * always hold; if a kernel keeps more, retry once with the shortfall (aligned) added.
   */
  async #createVerified(
    p: Placement,
    req: { name: string; size: number; mode: 'fsdax' | 'sector' },
    o: DeviceCallOptions,
  ): Promise<NdNamespace> {
    const limit = alignDown(p.region.maxAvailableExtent, p.align);
    let raw = p.raw;
    for (let attempt = 1; ; attempt++) {
      const ns = await this.#ndctl.createNamespace(
        {
          region: p.region.dev,
          name: req.name,
          size: raw,
          mode: req.mode,
          map: 'dev',
          uuid: this.#owner.namespaceUuid(),
        },
        o,
      );
      if (ns.size >= req.size) return ns;
      await this.#ndctl.destroyNamespace(ns.dev, o);
      const next = raw + alignUp(req.size - ns.size, p.align);
      this.#log.warn('namespace smaller than requested, destroyed', {
        namespace: ns.dev,
        raw,
        usable: ns.size,
        wanted: req.size,
        attempt,
      });
      if (attempt >= 2 || next > limit) {
        throw new InternalError(
          `namespace for volume ${req.name} in ${p.region.dev}: ${raw} raw bytes gave only ${ns.size} usable bytes, less than the requested ${req.size}`,
        );
      }
      raw = next;
    }
  }

  async #find(volumeId: string, o: DeviceCallOptions): Promise<NdNamespace | undefined> {
    return (await this.#ndctl.listNamespaces({}, o)).find((ns) => this.#owned(ns) && ns.name === volumeId);
  }

  async findDevice(volumeId: string, options: DeviceCallOptions = {}): Promise<PmemDeviceInfo | undefined> {
    const ns = await this.#queue.run(() => this.#find(volumeId, options));
    return ns === undefined ? undefined : toInfo(ns);
  }

  async getDevice(volumeId: string, options: DeviceCallOptions = {}): Promise<PmemDeviceInfo> {
    const info = await this.findDevice(volumeId, options);
    if (info === undefined) throw new DeviceNotFoundError(`volume ${volumeId} not found`);
    return info;
  }

  async listDevices(options: DeviceCallOptions = {}): Promise<PmemDeviceInfo[]> {
    const namespaces = await this.#queue.run(() => this.#ndctl.listNamespaces({}, options));
    return namespaces.filter((ns) => this.#owned(ns)).flatMap((ns) => toInfo(ns) ?? []);
  }

  async deleteDevice(volumeId: string, erase: boolean, options: DeviceCallOptions = {}): Promise<void> {
    const ns = await this.#queue.run(() => this.#enabledNamespace(volumeId, options));
    if (ns === undefined) return;
    const info = toInfo(ns);
    if (info === undefined)
      throw new InternalError(`namespace ${ns.dev} of volume ${volumeId} has no block device, cannot erase it`);
    await this.#devices.assertNotInUse(info.path, volumeId);
    await zeroDevice(this.#runner, { path: info.path, bytes: erase ? ns.size : undefined }, options.signal);
    await this.#queue.run(() => this.#ndctl.destroyNamespace(ns.dev, options));
    this.#log.debug('volume deleted', { volumeId, namespace: ns.dev, erased: erase });
  }

  /** The volume's namespace, enabled first when it is disabled (its data must be wiped before reuse). */
  async #enabledNamespace(volumeId: string, o: DeviceCallOptions): Promise<NdNamespace | undefined> {
    const ns = await this.#find(volumeId, o);
    if (ns === undefined || (ns.enabled && ns.blockdev !== undefined)) return ns;
    await this.#ndctl.enableNamespace(ns.dev, o);
    return (await this.#ndctl.listNamespaces({ namespace: ns.dev }, o))[0];
  }

  /** Capacity of the regions this driver may use; `total` counts every PMEM region of the node. */
  async getCapacity(options: DeviceCallOptions = {}): Promise<Capacity> {
    const { pmem, enabled } = await this.#queue.run(async () => {
      const all = (await this.#ndctl.listRegions(options)).filter((r) => r.type === 'pmem');
      const namespaces = await this.#ndctl.listNamespaces({}, options);
      return {
        pmem: all,
        enabled: this.#judge(
          all.filter((r) => r.enabled),
          namespaces,
        ).usable,
      };
    });
    return {
      maxVolumeSize: maxVolumeSize(enabled),
      available: enabled.reduce((sum, r) => sum + usableInExtent(r, r.availableSize), 0),
      managed: enabled.reduce((sum, r) => sum + r.size, 0),
      total: pmem.reduce((sum, r) => sum + r.size, 0),
    };
  }

  /**
   * A new volume: the usable bytes our reserve bound leaves in the raw size createDevice would request
   * in the region it would choose — a lower bound, as the kernel usually keeps less (64 MiB → 80 MiB
   * raw: 76 MiB by the bound, 78 MiB fsdax and 78.9 MiB sector on the kernel; recorded-fixtures
   * test), so a size above a limit by this bound is certainly above it. No region fits: `size`
   * (createDevice names the shortage). A growth: as resizeDevice, the size the namespace has.
   */
  async allocationSize(size: number, options: AllocationOptions = {}): Promise<number> {
    assertVolumeSize(size);
    if (options.grow !== undefined) return (await this.resizeDevice(options.grow, size, options)).size;
    const placement = choosePlacement(await this.#queue.run(() => this.#usableRegions(options)), size);
    return placement === undefined ? size : usableForRaw(placement.raw);
  }

  async resizeDevice(volumeId: string, size: number, options: DeviceCallOptions = {}): Promise<PmemDeviceInfo> {
    const info = await this.getDevice(volumeId, options);
    if (size <= info.size) return info;
    throw new UnimplementedError('direct mode cannot grow a namespace');
  }

  async close(): Promise<void> {
    // Nothing held: every call runs its own ndctl process.
  }
}

function toInfo(ns: NdNamespace): PmemDeviceInfo | undefined {
  if (ns.name === undefined || !ns.enabled || ns.blockdev === undefined) return undefined;
  return { volumeId: ns.name, path: `/dev/${ns.blockdev}`, size: ns.size, dax: ns.mode === 'fsdax' };
}
