// Which specs of Kubernetes' External Storage suite the k8s-storage tier runs (e2e.test v1.33.1 with
// e2e/k8s-storage/pmem-csi.yaml and pmem-csi-xfs.yaml): the curated subset of `npm run e2e`, and
// the specs we skip — by exact spec text or by a tag, each with its reason. Everything else of the
// suite runs in the full run (PMEM_CSI_K8S_STORAGE=full). Specs the suite skips by itself (a
// capability the definition does not claim, a second node it does not find) are counted as
// skipped with the suite's own message.

/** DriverInfo.Name of both definitions. */
export const DRIVER_NAME = 'pmem-csi.intel.com';

/** The two test-driver definitions (e2e/k8s-storage/), told apart in spec texts by the xfs one's test tag. */
export const DEFINITIONS = {
  ext4: { file: 'e2e/k8s-storage/pmem-csi.yaml', tag: '' },
  xfs: { file: 'e2e/k8s-storage/pmem-csi-xfs.yaml', tag: '[StorageClass: xfs]' },
} as const;
export type Definition = keyof typeof DEFINITIONS;

/** "External Storage [Driver: pmem-csi.intel.com]" and the definition's tag: what every spec of a definition starts with. */
export function specPrefix(definition: Definition): string {
  const tag = DEFINITIONS[definition].tag;
  return `External Storage [Driver: ${DRIVER_NAME}]${tag === '' ? '' : ` ${tag}`}`;
}

/** One spec of one definition: the text after the prefix ("[Testpattern: …] <suite> <test>"). */
export interface SpecRef {
  readonly definition: Definition;
  readonly spec: string;
}

export const fullSpecText = (s: SpecRef): string => `${specPrefix(s.definition)} ${s.spec}`;

/**
 * The curated subset (CI): a few specs per test pattern our capabilities enable — provisioning,
 * volumes (ext4, xfs, block), volumeMode block, volume-expand offline (ext4, grown at NodeStageVolume)
 * and online (xfs: this machine cannot grow a mounted ext4, see storageSkips), generic and CSI inline ephemeral volumes,
 * fsGroupChangePolicy, capacity, topology, multiVolume on one node, subPath. Measured budget: see
 * e2e/k8s-storage/README.md.
 */
export const CURATED: readonly SpecRef[] = [
  {
    definition: 'ext4',
    spec: '[Testpattern: Dynamic PV (default fs)] provisioning should provision storage with mount options',
  },
  { definition: 'ext4', spec: '[Testpattern: Dynamic PV (ext4)] volumes should store data' },
  { definition: 'ext4', spec: '[Testpattern: Dynamic PV (ext4)] volumes should allow exec of files on the volume' },
  { definition: 'ext4', spec: '[Testpattern: Dynamic PV (block volmode)] volumes should store data' },
  {
    definition: 'ext4',
    spec: '[Testpattern: Dynamic PV (block volmode)] volumeMode should fail to use a volume in a pod with mismatched mode [Slow]',
  },
  {
    definition: 'ext4',
    spec: '[Testpattern: Dynamic PV (block volmode)(allowExpansion)] volume-expand should resize volume when PVC is edited while pod is using it',
  },
  {
    definition: 'ext4',
    spec: '[Testpattern: Dynamic PV (default fs)(allowExpansion)] volume-expand Verify if offline PVC expansion works',
  },
  {
    definition: 'xfs',
    spec: '[Testpattern: Dynamic PV (default fs)(allowExpansion)] volume-expand should resize volume when PVC is edited while pod is using it',
  },
  {
    definition: 'ext4',
    spec: '[Testpattern: Generic Ephemeral-volume (default fs) (late-binding)] ephemeral should create read/write inline ephemeral volume',
  },
  {
    definition: 'ext4',
    spec: '[Testpattern: CSI Ephemeral-volume (default fs)] ephemeral should create read/write inline ephemeral volume',
  },
  {
    definition: 'ext4',
    spec: '[Testpattern: CSI Ephemeral-volume (default fs)] ephemeral should support multiple inline ephemeral volumes',
  },
  {
    definition: 'ext4',
    spec: '[Testpattern: Dynamic PV (default fs)] fsgroupchangepolicy (OnRootMismatch)[LinuxOnly], pod created with an initial fsgroup, volume contents ownership changed via chgrp in first pod, new pod with same fsgroup skips ownership changes to the volume contents',
  },
  { definition: 'ext4', spec: '[Testpattern: Dynamic PV (default fs)] capacity provides storage capacity information' },
  {
    definition: 'ext4',
    spec: '[Testpattern: Dynamic PV (delayed binding)] topology should provision a volume and schedule a pod with AllowedTopologies',
  },
  {
    definition: 'ext4',
    spec: '[Testpattern: Dynamic PV (filesystem volmode)] multiVolume [Slow] should access to two volumes with the same volume mode and retain data across pod recreation on the same node',
  },
  {
    definition: 'ext4',
    spec: '[Testpattern: Dynamic PV (filesystem volmode)] multiVolume [Slow] should concurrently access the single volume from pods on the same node',
  },
  {
    // Two pods write and read one raw block volume with dd oflag/iflag=nocache (GNU dd: the
    // jessie-dnsutils stand-in of images.sh carries it; the first full run failed here on busybox's dd).
    definition: 'ext4',
    spec: '[Testpattern: Dynamic PV (block volmode)] multiVolume [Slow] should concurrently access the single volume from pods on the same node',
  },
  { definition: 'ext4', spec: '[Testpattern: Dynamic PV (default fs)] subPath should support existing directory' },
  {
    definition: 'ext4',
    spec: '[Testpattern: Dynamic PV (default fs)] subPath should support file as subpath [LinuxOnly]',
  },
  { definition: 'xfs', spec: '[Testpattern: Dynamic PV (xfs)] [Slow] volumes should store data' },
];

/** A spec (or specs) we skip: `spec` is an exact spec text of one definition, `match` a regular expression on full spec texts. */
export type StorageSkip = { readonly why: string } & (
  { readonly spec: SpecRef; readonly match?: never } | { readonly match: string; readonly spec?: never }
);

/** What the skips depend on: facts about this machine. */
export interface MachineFacts {
  /** CAP_SYS_RESOURCE in the bounding set (without it no process here, the node driver included, can grow a mounted ext4). */
  readonly sysResource: boolean;
}

const NO_SYS_RESOURCE =
  'this machine withholds CAP_SYS_RESOURCE from every process (bounding set), and growing a MOUNTED ext4 (resize2fs online, ' +
  'while a pod uses the volume) needs it: the node answers FAILED_PRECONDITION naming the capability, and grows the ' +
  'filesystem at the next NodeStageVolume instead (offline, which "Verify if offline PVC expansion works" runs here). ' +
  'The same specs run on xfs (pmem-csi-xfs.yaml), and they run here where the capability exists';

/** The skips for this machine. */
export function storageSkips(facts: MachineFacts): readonly StorageSkip[] {
  const skips: StorageSkip[] = [
    {
      match: '\\[Disruptive\\]',
      why: 'restarts or stops the kubelet through the provider (ssh/systemd); the real node runs its kubelet as a process of the test harness, which e2e.test cannot reach',
    },
    {
      match: '\\[Serial\\]',
      why:
        '"provisioning should provision storage with any volume data source" deploys the volume-data-source-validator and hello-populator of registry.k8s.io/sig-storage, images nobody builds here (no registry is reachable); ' +
        'the others are the scale and stress specs (volume-lifecycle-performance, pvc-deletion-performance, snapshottable-stress) and "volumeLimits should support volume limits", which the suite skips by itself after setting up: ' +
        'the definitions declare no PerformanceTestOptions, no snapshots and no per-node volume limit (NodeGetInfo max_volumes_per_node 0)',
    },
    {
      match: 'volumeMode should not mount / map unused volumes in a pod',
      why:
        "lists the pod's volume directories through a host-exec pod, which runs nsenter --mount=/proc/1/ns/mnt: this machine " +
        "refuses every process, root on the host included, access to PID 1's namespaces (its init is the VM's /process_api, the only " +
        "process here with CAP_SYS_RESOURCE): nsenter: can't open '/rootfs/proc/1/ns/mnt': Permission denied. Every other " +
        "process's namespaces are accessible; the spec names PID 1",
    },
    {
      match: 'on different node',
      why: 'needs a second schedulable node; the real-node tier has one node (the suite would skip it itself after creating the volumes)',
    },
  ];
  if (!facts.sysResource) {
    for (const spec of [
      '[Testpattern: Dynamic PV (default fs)(allowExpansion)] volume-expand should resize volume when PVC is edited while pod is using it',
      '[Testpattern: Generic Ephemeral-volume (default fs) (late-binding)] ephemeral should support expansion of pvcs created for ephemeral pvcs',
      '[Testpattern: Generic Ephemeral-volume (default fs) (immediate-binding)] ephemeral should support expansion of pvcs created for ephemeral pvcs',
    ])
      skips.push({ spec: { definition: 'ext4', spec }, why: NO_SYS_RESOURCE });
  }
  return skips;
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The -ginkgo.skip expression: exact texts anchored at the end (Ginkgo may prefix containers), patterns as given. */
export function skipExpression(skips: readonly StorageSkip[]): string | undefined {
  if (skips.length === 0) return undefined;
  return skips.map((s) => (s.spec === undefined ? s.match : `${escapeRe(fullSpecText(s.spec))}$`)).join('|');
}

/** The -ginkgo.focus expression: the curated specs exactly, or every External Storage spec of our driver. */
export function focusExpression(curated: readonly SpecRef[] | 'all'): string {
  if (curated === 'all') return `External.Storage \\[Driver: ${escapeRe(DRIVER_NAME)}\\]`;
  return curated.map((s) => `${escapeRe(fullSpecText(s))}$`).join('|');
}

/** The skip that covers a full spec text, if any. */
export function skipFor(skips: readonly StorageSkip[], fullText: string): StorageSkip | undefined {
  return skips.find((s) =>
    s.spec === undefined ? new RegExp(s.match).test(fullText) : fullText.endsWith(fullSpecText(s.spec)),
  );
}
