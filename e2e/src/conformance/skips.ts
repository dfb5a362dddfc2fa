// The csi-sanity specs we skip, by exact spec text, each with the reason. Everything else runs.
// (Specs for capabilities the driver does not advertise — snapshots, cloning, ControllerPublish,
// group snapshots — are skipped by csi-sanity itself and counted as skipped in the JUnit file.)
// csi-sanity runs behind plugin-shim.ts, whose Identity adds the controller's CONTROLLER_SERVICE to
// the node's, so the whole-lifecycle specs below run instead of being skipped as "Controller
// Service not provided".

/**
 * csi-sanity's whole-lifecycle specs: NodeGetInfo, CreateVolume on the node's topology, NodeStage,
 * NodePublish, NodeGetVolumeStats (and 10 times each for idempotency), then the cleanup. Skipped by
 * csi-sanity as "Controller Service not provided" until the shim; they must pass on emulated devices.
 */
export const LIFECYCLE_SPECS: readonly string[] = ['Node Service should work', 'Node Service should be idempotent'];

/** What csi-sanity said when it skipped the lifecycle specs (the shim's reason to exist). */
export const NO_CONTROLLER_SKIP = 'Controller Service not provided';

export interface SanitySkip {
  /** Full Ginkgo spec text: container names and the It text joined by spaces. */
  readonly spec: string;
  readonly why: string;
}

/** Skipped only on fake devices: they stage or publish, which needs a real block device to format. */
export const FAKE_ONLY_SKIPS: readonly SanitySkip[] = [
  {
    spec: 'Node Service NodeUnpublishVolume should remove target path',
    why: 'stages an ext4 volume: fake devices have no block device to mkfs/mount (runs in the emulated tier)',
  },
  {
    spec: 'Node Service NodeGetVolumeStats should fail when volume does not exist on the specified path',
    why: 'stages and publishes a volume first: needs a real block device (runs in the emulated tier)',
  },
  {
    spec: 'Node Service NodeExpandVolume should work if node-expand is called after node-publish',
    why: 'stages and publishes a volume first: needs a real block device (runs in the emulated tier)',
  },
  {
    spec: 'Node Service NodePublishVolume with single node multi writer capability should fail when volume with single node single writer access mode is already mounted at a different target path',
    why: 'stages and publishes an ext4 volume before the second publish: needs a real block device (runs in the emulated tier)',
  },
  ...LIFECYCLE_SPECS.map((spec) => ({
    spec,
    why: 'stages and publishes an ext4 volume: needs a real block device to mkfs/mount (runs in the emulated tier)',
  })),
];

/**
 * Skipped on emulated devices only where this machine cannot do what the spec needs: growing a
 * MOUNTED ext4 filesystem (csi-sanity's default volume is ext4) needs CAP_SYS_RESOURCE, which root
 * lacks on these VMs (CapEff bit 24 clear). The node answers FAILED_PRECONDITION naming the
 * capability; our own tests grow mounted xfs for real and ext4 where the capability exists.
 */
export function emulatedSkips(hasSysResource: boolean): readonly SanitySkip[] {
  return hasSysResource
    ? []
    : [
        {
          spec: 'Node Service NodeExpandVolume should work if node-expand is called after node-publish',
          why: 'no CAP_SYS_RESOURCE here: online ext4 resize is refused by the kernel',
        },
      ];
}

/**
 * Skipped for Kata Containers volumes (kataContainers: "true" on every volume csi-sanity makes),
 * where the driver refuses on purpose, saying why (issue 26).
 */
export const KATA_SKIPS: readonly SanitySkip[] = [
  {
    spec: 'ExpandVolume [Controller Server] should work',
    why: 'a Kata Containers volume cannot grow: its image file has a fixed size (FAILED_PRECONDITION saying so; kata-emulated.test checks the refusal)',
  },
  {
    spec: 'Node Service NodeExpandVolume should work if node-expand is called after node-publish',
    why: 'grows the volume first: refused for Kata Containers volumes, as above',
  },
];

/** A Ginkgo --ginkgo.skip regular expression matching exactly these specs. */
export function skipRegex(skips: readonly SanitySkip[]): string | undefined {
  if (skips.length === 0) return undefined;
  const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // Not anchored at the start: Ginkgo prefixes the suite's own container text.
  return skips.map((s) => `${esc(s.spec)}$`).join('|');
}
