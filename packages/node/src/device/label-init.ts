// Initializing the namespace labels of a label-less region, only when that cannot lose data. lvm and
// direct mode call it from setup(); the ndctl commands themselves are ndctl.ts's.
import type { CommandRunner, Logger } from '@pmem-csi/runtime';
import { labelLessNamespace, type Ndctl, type NdctlCallOptions, type NdNamespace, type NdRegion } from './ndctl.js';

export interface LabelInitDeps {
  readonly ndctl: Ndctl;
  readonly runner: CommandRunner;
  readonly log: Logger;
  /** True when nobody holds the block device open (exclusive open succeeds). */
  readonly isUnused: (path: string) => Promise<boolean>;
}

async function hasSignature(runner: CommandRunner, path: string, o: NdctlCallOptions): Promise<boolean> {
  // blkid -p exits 0 when it finds a filesystem/partition signature, 2 when it finds none.
  const res = await runner.run('blkid', ['-p', path], { signal: o.signal, okExitCodes: [0, 2] });
  return res.exitCode === 0;
}

async function labelInitBlocker(
  region: NdRegion,
  ctx: { regions: readonly NdRegion[]; raw: NdNamespace },
  deps: LabelInitDeps,
  o: NdctlCallOptions,
): Promise<string | undefined> {
  if (region.dimms.length === 0) return 'its DIMMs are unknown';
  const shared = ctx.regions.find((r) => r.dev !== region.dev && r.dimms.some((d) => region.dimms.includes(d)));
  if (shared) return `its DIMMs also back ${shared.dev}`;
  if (ctx.raw.blockdev === undefined) return `${ctx.raw.dev} has no block device to inspect`;
  const path = `/dev/${ctx.raw.blockdev}`;
  if (!(await deps.isUnused(path))) return `${path} is in use`;
  if (await hasSignature(deps.runner, path, o)) return `${path} holds data (blkid found a signature)`;
  return undefined;
}

/**
 * A fresh NVDIMM (e.g. QEMU with label-size) runs label-less: one raw namespace spans the region and
 * `create-namespace --size` fails ("label-less namespaces do not support sub-dividing a region").
 * Initialize its labels only when that cannot lose data: the raw namespace is unused and carries no
 * signature, and the region's DIMMs back no other region. Otherwise log how to do it by hand.
 * @returns true when the region now has labels (or had them already)
 */
export async function initLabelsIfSafe(
  region: NdRegion,
  ctx: { regions: readonly NdRegion[]; namespaces: readonly NdNamespace[] },
  deps: LabelInitDeps,
  o: NdctlCallOptions = {},
): Promise<boolean> {
  const raw = labelLessNamespace(ctx.namespaces.filter((ns) => ns.region === region.dev));
  if (raw === undefined) return true;
  const blocker = await labelInitBlocker(region, { regions: ctx.regions, raw }, deps, o);
  if (blocker !== undefined) {
    deps.log.warn('region has no namespace labels and is left alone', {
      region: region.dev,
      reason: blocker,
      fix: `ndctl disable-region ${region.dev}; ndctl init-labels -f ${region.dimms.join(' ') || 'all'}; ndctl enable-region ${region.dev}`,
    });
    return false;
  }
  deps.log.info('initializing namespace labels of a label-less, unused region', {
    region: region.dev,
    dimms: region.dimms,
  });
  await deps.ndctl.initLabels({ region: region.dev, dimms: region.dimms }, o);
  return true;
}
