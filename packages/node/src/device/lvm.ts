// LVM device mode: one fsdax namespace named "pmem-csi" per PMEM region (no other namespace is ever
// touched), one volume group per region named <bus><region>fsdax, one logical volume per CSI volume
// (LV name = volume id). Behaviour follows the Go driver's lvm mode.
// Ownership among driver instances (ownership.ts): the namespace it creates carries its owner mark,
// its VG the tag pmem-csi.intel.com/owner=<driver name> from vgcreate on; an untagged VG of a region
// it may use (made by the Go driver or before the tags) is adopted by tagging it. A region whose VG
// another instance tagged — or, without tags, whose marked namespaces another instance owns — is
// refused: nothing there is created, changed, listed or counted. New volumes go only to VGs tagged
// as this driver's (checked at every call: the tags come with each state read, ONE `lvm fullreport`
// of VGs and LVs; a create is fullreport, lvcreate, fullreport). All ndctl/LVM calls of one manager
// run one at a time (SerialQueue); erases on delete run outside it, so other volumes' calls go on.
import { SerialQueue, requireTools, type CommandRunner, type Logger } from '@pmem-csi/runtime';
import { MODE_TOOLS, type Capacity, InternalError, InvalidArgumentError } from '@pmem-csi/csi';
import { alignDown, alignUp, assertVolumeSize, notEnoughSpace } from './sizes.js';
import {
  DeviceExistsError,
  DeviceNotFoundError,
  NotEnoughSpaceToGrowError,
  type AllocationOptions,
  type CreateDeviceRequest,
  type DeviceCallOptions,
  type DeviceManager,
  type PmemDeviceInfo,
} from './device-manager.js';
import {
  LVM_NAMESPACE_NAME,
  LV_NAME,
  MANAGED_VG,
  chooseVg,
  emptiestVg,
  isEmpty,
  largestLvSize,
  lvmNamespaceSize,
  notTakenOver,
  regionOfVg,
  toInfo,
  vgNameFor,
  vgOf,
  type LvmState,
} from './lvm-layout.js';
import { LvmTools, isLvmNotFound, type LogicalVolume, type VolumeGroup } from './lvm-tools.js';
import { initLabelsIfSafe } from './label-init.js';
import { Ndctl, labelLessNamespace, type NdNamespace, type NdRegion } from './ndctl.js';
import {
  PmemOwner,
  RefusalLog,
  judgeRegion,
  namespaceClaim,
  pmemOwnedByOthers,
  tagOwners,
  vgClaims,
  type Refusal,
} from './ownership.js';
import { hostBlockDevices, isUnused, zeroDevice, type BlockDeviceAccess } from './wipe.js';

export interface LvmDeviceManagerOptions {
  readonly runner: CommandRunner;
  readonly log: Logger;
  /** Share of each region for the pmem-csi namespace, 0..100 (0 means 100). */
  readonly pmemPercentage: number;
  readonly blockDevices?: BlockDeviceAccess;
  /** Initialize labels of label-less regions when provably unused (default true). */
  readonly autoInitLabels?: boolean;
  /** The driver instance whose PMEM this is (default: pmem-csi.intel.com); see ownership.ts. */
  readonly owner?: PmemOwner;
}

export class LvmDeviceManager implements DeviceManager {
  readonly mode = 'lvm' as const;
  readonly #runner: CommandRunner;
  readonly #log: Logger;
  readonly #pct: number;
  readonly #ndctl: Ndctl;
  readonly #lvm: LvmTools;
  readonly #devices: BlockDeviceAccess;
  readonly #autoInitLabels: boolean;
  readonly #owner: PmemOwner;
  readonly #refusals: RefusalLog;
  readonly #queue = new SerialQueue();

  constructor(options: LvmDeviceManagerOptions) {
    const pct = options.pmemPercentage;
    if (!Number.isInteger(pct) || pct < 0 || pct > 100) {
      throw new InvalidArgumentError(`pmemPercentage must be an integer 0..100 (0 means 100), got ${pct}`);
    }
    this.#runner = options.runner;
    this.#log = options.log.child({ deviceMode: 'lvm' });
    this.#pct = pct;
    this.#ndctl = new Ndctl(options.runner);
    this.#lvm = new LvmTools(options.runner);
    this.#devices = options.blockDevices ?? hostBlockDevices;
    this.#autoInitLabels = options.autoInitLabels ?? true;
    this.#owner = options.owner ?? new PmemOwner();
    this.#refusals = new RefusalLog((msg, fields) => this.#log.warn(msg, fields));
  }

  /**
   * Namespaces and VGs of every region this driver may use. Regions another driver owns are left as
   * they are; when that leaves this driver no VG and no volume at all, it fails naming the owners.
   * @throws FailedPreconditionError (missing tools, every region another driver's)
   */
  async setup(options: DeviceCallOptions = {}): Promise<void> {
    const tools = [...MODE_TOOLS.lvm, ...(this.#autoInitLabels ? ['blkid'] : [])];
    requireTools(this.#runner, tools, 'lvm device mode');
    await this.#queue.run(async () => {
      const regions = (await this.#ndctl.listRegions(options)).filter((r) => r.type === 'pmem');
      if (regions.length === 0) {
        this.#log.warn('no PMEM regions found: this node offers no capacity');
        return;
      }
      this.#log.info('PMEM this driver takes is marked as its own', {
        driver: this.#owner.driverName,
        ownerMark: this.#owner.mark,
        vgTag: this.#owner.tag,
      });
      const ctx = { all: regions, vgs: await this.#lvm.vgs(options) };
      for (const left of notTakenOver(ctx.vgs)) this.#log.warn('volume group not taken over', left);
      const refusals: Refusal[] = [];
      for (const region of regions) {
        const refusal = await this.#setupRegion(region, ctx, options);
        if (refusal !== undefined) refusals.push(refusal);
      }
      const seen = regions.map((r) => r.dev);
      this.#refusals.report(seen, refusals);
      if (refusals.length > 0 && isEmpty(await this.#state(options))) throw pmemOwnedByOthers(this.#owner, refusals);
    });
  }

  /** Set up one region; the refusal when another driver owns it. */
  async #setupRegion(
    region: NdRegion,
    ctx: { all: readonly NdRegion[]; vgs: readonly VolumeGroup[] },
    o: DeviceCallOptions,
  ): Promise<Refusal | undefined> {
    const log = this.#log.child({ region: region.dev });
    if (!region.enabled || region.bus === undefined) {
      log.warn('region skipped', { reason: region.enabled ? 'bus unknown' : 'region disabled' });
      return undefined;
    }
    const usable = await this.#regionNamespaces(region, ctx.all, o);
    if (usable === undefined) return undefined;
    const vgName = vgNameFor(region.bus, region.dev);
    const vg = { name: vgName, existing: ctx.vgs.find((g) => g.name === vgName) };
    const refusal = this.#judge(region.dev, usable.namespaces, vg.existing);
    if (refusal !== undefined) return refusal;
    // A pmem-csi namespace another driver marked (it lost this region) is never put into our VG.
    let ours = usable.namespaces.filter((ns) => ns.name === LVM_NAMESPACE_NAME && this.#owner.mayUse(ns));
    if (ours.length === 0) {
      const created = await this.#createNamespace(usable.region, log, o);
      if (created === undefined) return undefined;
      ours = [created];
    }
    const devices = ours.flatMap((ns) => (ns.enabled && ns.blockdev ? [`/dev/${ns.blockdev}`] : []));
    if (devices.length < ours.length)
      log.warn('disabled pmem-csi namespace left out of the volume group', { namespaces: ours.map((n) => n.dev) });
    await this.#ensureVg(vg, devices, o);
    return undefined;
  }

  /**
   * Who owns a region: its VG's owner tags where it has any (a VG name exists once per host, so a VG
   * another driver tagged can never be ours), else the marked namespaces in it.
   */
  #judge(region: string, namespaces: readonly NdNamespace[], vg: VolumeGroup | undefined): Refusal | undefined {
    const tagged = vg === undefined ? [] : vgClaims(vg);
    const claims = tagged.length > 0 ? tagged : namespaces.flatMap((ns) => namespaceClaim(ns) ?? []);
    return judgeRegion(this.#owner, region, claims);
  }

  /** The marked pmem-csi namespace of a region; undefined when the region is too small (logged). */
  async #createNamespace(region: NdRegion, log: Logger, o: DeviceCallOptions): Promise<NdNamespace | undefined> {
    const size = lvmNamespaceSize(region, this.#pct);
    if (size === 0) {
      log.warn('region skipped: less than 2 GiB usable for the pmem-csi namespace', {
        size: region.size,
        pmemPercentage: this.#pct,
      });
      return undefined;
    }
    log.info('creating the pmem-csi namespace', { size });
    return this.#ndctl.createNamespace(
      {
        region: region.dev,
        name: LVM_NAMESPACE_NAME,
        size,
        mode: 'fsdax',
        map: 'dev',
        uuid: this.#owner.namespaceUuid(),
      },
      o,
    );
  }

  /**
   * The region and its namespaces, after making a label-less region usable; undefined = skip the
   * region. After label initialisation the region is listed again: a label-less region reports
   * available_size = max_available_extent = 0 (its raw namespace spans it), so sizing the new
   * namespace from the old listing skipped every fresh NVDIMM (seen in the QEMU tier).
   */
  async #regionNamespaces(
    region: NdRegion,
    all: readonly NdRegion[],
    o: DeviceCallOptions,
  ): Promise<{ region: NdRegion; namespaces: NdNamespace[] } | undefined> {
    const namespaces = await this.#ndctl.listNamespaces({ region: region.dev }, o);
    if (labelLessNamespace(namespaces) === undefined) return { region, namespaces };
    const deps = {
      ndctl: this.#ndctl,
      runner: this.#runner,
      log: this.#log,
      isUnused: (p: string) => isUnused(this.#devices, p),
    };
    if (!this.#autoInitLabels || !(await initLabelsIfSafe(region, { regions: all, namespaces }, deps, o))) {
      this.#log.warn('region skipped: it has no namespace labels', {
        region: region.dev,
        autoInitLabels: this.#autoInitLabels,
      });
      return undefined;
    }
    const relisted = (await this.#ndctl.listRegions(o)).find((r) => r.dev === region.dev);
    if (relisted === undefined)
      throw new InternalError(`region ${region.dev} vanished after its labels were initialised`);
    return { region: relisted, namespaces: await this.#ndctl.listNamespaces({ region: region.dev }, o) };
  }

  /** The VG of a region with our namespaces in it, tagged as ours (new, or adopted when untagged). */
  async #ensureVg(
    vg: { name: string; existing: VolumeGroup | undefined },
    devices: readonly string[],
    o: DeviceCallOptions,
  ): Promise<void> {
    const pvs = await this.#lvm.pvs(o);
    let exists = vg.existing !== undefined;
    for (const device of devices) {
      const pv = pvs.find((p) => p.name === device);
      if (pv?.vgName === vg.name) continue;
      if (pv !== undefined && pv.vgName !== '') {
        this.#log.error('pmem-csi namespace belongs to another volume group, left alone', {
          device,
          vg: pv.vgName,
          wanted: vg.name,
        });
        continue;
      }
      if (pv === undefined) await this.#lvm.pvcreate(device, o);
      if (exists) await this.#lvm.vgextend(vg.name, device, o);
      else await this.#lvm.vgcreate(vg.name, [device], { ...o, tags: [this.#owner.tag] });
      exists = true;
      this.#log.info('volume group ready', { vg: vg.name, device });
    }
    if (vg.existing !== undefined && !vg.existing.tags.includes(this.#owner.tag)) {
      await this.#lvm.vgAddTag(vg.name, this.#owner.tag, o);
      this.#log.info('volume group adopted: tagged as owned by this driver', { vg: vg.name, tag: this.#owner.tag });
    }
  }

  /** Our VGs and volumes now (one LVM process); VGs another driver tagged are left out (and reported once). */
  async #state(o: DeviceCallOptions): Promise<LvmState> {
    const report = await this.#lvm.fullReport(o);
    const managed = report.vgs.filter((g) => MANAGED_VG.test(g.name));
    const tagged = managed.filter((g) => tagOwners(g.tags).length > 0);
    const refusals = tagged.flatMap((g) => judgeRegion(this.#owner, regionOfVg(g.name), vgClaims(g)) ?? []);
    const seen = tagged.map((g) => regionOfVg(g.name));
    this.#refusals.report(seen, refusals);
    const vgs = tagged.filter((g) => !refusals.some((r) => r.region === regionOfVg(g.name)));
    const listed = managed.filter((g) => {
      const owners = tagOwners(g.tags);
      return owners.length === 0 || owners.includes(this.#owner.driverName);
    });
    const names = new Set(listed.map((g) => g.name));
    const lvs = report.lvs.filter((lv) => names.has(lv.vgName) && lv.path !== '');
    return { vgs, listed, lvs };
  }

  async createDevice(req: CreateDeviceRequest, options: DeviceCallOptions = {}): Promise<PmemDeviceInfo> {
    if (!LV_NAME.test(req.volumeId)) {
      throw new InvalidArgumentError(
        `volume id ${JSON.stringify(req.volumeId)} is not a valid LVM volume name (letters, digits, "+_.-", not starting with "-", at most 127 characters)`,
      );
    }
    assertVolumeSize(req.size);
    return this.#queue.run(async () => {
      const { vgs, lvs } = await this.#state(options);
      if (lvs.some((lv) => lv.name === req.volumeId))
        throw new DeviceExistsError(`volume ${req.volumeId} already exists`);
      const choice = chooseVg(vgs, req.size);
      if (choice === undefined) throw notEnoughSpace(req.volumeId, req.size, largestLvSize(vgs));
      await this.#lvm.lvcreate({ vg: choice.vg.name, name: req.volumeId, size: choice.size }, options);
      const lv = await this.#findLv(req.volumeId, options);
      if (lv === undefined)
        throw new InternalError(
          `lvcreate succeeded but the LVM report does not show ${choice.vg.name}/${req.volumeId}`,
        );
      try {
        await zeroDevice(this.#runner, { path: lv.path }, options.signal);
      } catch (e) {
        await this.#lvm.lvremove(lv.vgName, lv.name, options);
        throw e;
      }
      this.#log.debug('volume created', { volumeId: req.volumeId, vg: lv.vgName, size: lv.size });
      return toInfo(lv);
    });
  }

  async #findLv(volumeId: string, o: DeviceCallOptions): Promise<LogicalVolume | undefined> {
    return (await this.#state(o)).lvs.find((lv) => lv.name === volumeId);
  }

  async findDevice(volumeId: string, options: DeviceCallOptions = {}): Promise<PmemDeviceInfo | undefined> {
    const lv = await this.#queue.run(() => this.#findLv(volumeId, options));
    return lv === undefined ? undefined : toInfo(lv);
  }

  async getDevice(volumeId: string, options: DeviceCallOptions = {}): Promise<PmemDeviceInfo> {
    const device = await this.findDevice(volumeId, options);
    if (device === undefined) throw new DeviceNotFoundError(`volume ${volumeId} not found`);
    return device;
  }

  async deleteDevice(volumeId: string, erase: boolean, options: DeviceCallOptions = {}): Promise<void> {
    const lv = await this.#queue.run(() => this.#findLv(volumeId, options));
    if (lv === undefined) return;
    await this.#devices.assertNotInUse(lv.path, volumeId);
    await zeroDevice(this.#runner, { path: lv.path, bytes: erase ? lv.size : undefined }, options.signal);
    await this.#queue.run(async () => {
      try {
        await this.#lvm.lvremove(lv.vgName, lv.name, options);
      } catch (e) {
        if (!isLvmNotFound(e)) throw e;
      }
    });
    this.#log.debug('volume deleted', { volumeId, vg: lv.vgName, erased: erase });
  }

  async listDevices(options: DeviceCallOptions = {}): Promise<PmemDeviceInfo[]> {
    const { lvs } = await this.#queue.run(() => this.#state(options));
    return lvs.map(toInfo);
  }

  async getCapacity(options: DeviceCallOptions = {}): Promise<Capacity> {
    return this.#queue.run(async () => {
      const regions = (await this.#ndctl.listRegions(options)).filter((r) => r.type === 'pmem');
      const { vgs } = await this.#state(options);
      return {
        maxVolumeSize: largestLvSize(vgs),
        available: vgs.reduce((sum, g) => sum + g.free, 0),
        managed: vgs.reduce((sum, g) => sum + g.size, 0),
        total: regions.reduce((sum, r) => sum + r.size, 0),
      };
    });
  }

  /**
   * The size rounded up to the extent size of the VG: the volume's own when growing, else the VG a
   * create would choose (no VG: `size`, which createDevice then refuses for lack of space).
   */
  async allocationSize(size: number, options: AllocationOptions = {}): Promise<number> {
    assertVolumeSize(size);
    return this.#queue.run(async () => {
      const { vgs, listed, lvs } = await this.#state(options);
      if (options.grow === undefined) {
        const vg = emptiestVg(vgs);
        return vg === undefined ? size : alignUp(size, vg.extentSize);
      }
      const lv = lvs.find((l) => l.name === options.grow);
      if (lv === undefined) throw new DeviceNotFoundError(`volume ${options.grow} not found`);
      return Math.max(lv.size, alignUp(size, vgOf(listed, lv).extentSize));
    });
  }

  async resizeDevice(volumeId: string, size: number, options: DeviceCallOptions = {}): Promise<PmemDeviceInfo> {
    assertVolumeSize(size);
    return this.#queue.run(async () => {
      const { listed, lvs } = await this.#state(options);
      const lv = lvs.find((l) => l.name === volumeId);
      if (lv === undefined) throw new DeviceNotFoundError(`volume ${volumeId} not found`);
      if (lv.size >= size) return toInfo(lv);
      const vg = vgOf(listed, lv);
      const target = alignUp(size, vg.extentSize);
      if (target - lv.size > vg.free) {
        const maxSize = lv.size + alignDown(vg.free, vg.extentSize);
        throw new NotEnoughSpaceToGrowError(
          `not enough PMEM to grow volume ${volumeId} to ${size} bytes: it can grow to at most ${maxSize} bytes`,
          maxSize,
        );
      }
      await this.#lvm.lvextend({ vg: vg.name, name: lv.name, size: target }, options);
      const grown = await this.#findLv(volumeId, options);
      if (grown === undefined) throw new InternalError(`volume ${volumeId} vanished while growing it`);
      this.#log.info('volume grown', { volumeId, size: grown.size });
      return toInfo(grown);
    });
  }

  async close(): Promise<void> {
    // Nothing held: every call runs its own tool processes.
  }
}
