// Storage objects of the data-path scenarios, and what kubelet and node-driver-registrar would do
// on a real node: with no kubelet, nobody creates CSINode objects or topology labels, so the tests
// register every simulated node for our driver themselves (driver name, node id = node name, the
// topology key our NodeGetInfo reports), exactly as the registrar's registration would.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_DRIVER_NAME, topologyKey } from '@pmem-csi/api';
import type { LocalStack } from '@pmem-csi/driver';
import { describeRef, type Kube, type KubeObject, type Ref } from './kube.js';
import { runTool } from './processes.js';
import { waitFor } from './wait.js';

export const DRIVER = DEFAULT_DRIVER_NAME;
export const TOPOLOGY_KEY = topologyKey(DRIVER);
export const TEST_NAMESPACE = 'default';

export interface PvSpec {
  claimRef?: { name?: string; namespace?: string };
  csi?: { driver: string; volumeHandle: string; fsType?: string; volumeAttributes?: Record<string, string> };
  nodeAffinity?: {
    required?: {
      nodeSelectorTerms: Array<{ matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> }>;
    };
  };
  persistentVolumeReclaimPolicy?: string;
  capacity?: { storage?: string };
}

export interface PersistentVolume extends KubeObject {
  spec: PvSpec;
  status?: { phase?: string };
}

export interface Claim extends KubeObject {
  spec: { volumeName?: string; storageClassName?: string };
  status?: { phase?: string };
}

/** CSINode + topology label of every node, as node-driver-registrar and kubelet would create them. */
export async function registerNodes(kube: Kube, nodes: readonly string[], driver: string = DRIVER): Promise<void> {
  for (const node of nodes) {
    await kube.apply(
      { apiVersion: 'v1', kind: 'Node', metadata: { name: node, labels: { [topologyKey(driver)]: node } } },
      { fieldManager: 'kubelet' },
    );
    const nodeObject = await kube.must({ apiVersion: 'v1', kind: 'Node', name: node });
    await kube.apply(
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'CSINode',
        metadata: {
          name: node,
          ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node, uid: nodeObject.metadata.uid ?? '' }],
        },
        spec: { drivers: [{ name: driver, nodeID: node, topologyKeys: [topologyKey(driver)] }] },
      },
      { fieldManager: 'kubelet' },
    );
  }
}

/** A CSIDriver like the operator's (no attach, pod info on mount), without storage capacity tracking. */
export function csiDriver(driver: string = DRIVER): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name: driver },
    spec: {
      attachRequired: false,
      podInfoOnMount: true,
      volumeLifecycleModes: ['Persistent', 'Ephemeral'],
      storageCapacity: false,
    },
  };
}

export function storageClass(
  name: string,
  bindingMode: 'Immediate' | 'WaitForFirstConsumer',
  driver: string = DRIVER,
): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: driver,
    reclaimPolicy: 'Delete',
    volumeBindingMode: bindingMode,
    // As the examples (deploy/kustomize/examples): these tests run lvm, emulated or fake devices.
    allowVolumeExpansion: true,
    parameters: { 'csi.storage.k8s.io/fstype': 'ext4', eraseafter: 'false' },
  };
}

export function claim(name: string, storageClassName: string, size: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: TEST_NAMESPACE },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: size } } },
  };
}

/** A pod that uses `claimName`; the scheduler picks its node (simulated: kwok makes it Running). */
export function podWithClaim(name: string, claimName: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: TEST_NAMESPACE },
    spec: {
      nodeSelector: { storage: 'pmem' },
      containers: [
        { name: 'app', image: 'registry.k8s.io/pause:3.10', volumeMounts: [{ name: 'data', mountPath: '/data' }] },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  };
}

export const claimRef = (name: string): Ref => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  name,
  namespace: TEST_NAMESPACE,
});
export const pvRef = (name: string): Ref => ({ apiVersion: 'v1', kind: 'PersistentVolume', name });

/** Wait until the claim is Bound; returns the bound PV. */
export async function waitBound(
  kube: Kube,
  name: string,
  timeoutMs = 90_000,
  why: () => Promise<string> | string = () => '',
): Promise<PersistentVolume> {
  const pvc = await waitFor(
    `PVC ${name} to be Bound`,
    async () => {
      const c = await kube.get<Claim>(claimRef(name));
      return c?.status?.phase === 'Bound' && c.spec.volumeName ? c : undefined;
    },
    {
      timeoutMs,
      describe: async () => `${(await kube.get<Claim>(claimRef(name)))?.status?.phase ?? 'absent'}; ${await why()}`,
    },
  );
  const pv = await kube.must<PersistentVolume>(pvRef(pvc.spec.volumeName ?? ''));
  return pv;
}

/** Wait until an object is gone (deleted and its finalizers done). */
export async function waitGone(
  kube: Kube,
  ref: Ref,
  timeoutMs = 90_000,
  why: () => Promise<string> | string = () => '',
): Promise<void> {
  await waitFor(
    `${describeRef(ref)} to be deleted`,
    async () => ((await kube.get(ref)) === undefined ? true : undefined),
    { timeoutMs, describe: why },
  );
}

/** The nodes named by the PV's required node affinity on the topology key. */
export function affinityNodes(pv: PersistentVolume, key: string = TOPOLOGY_KEY): string[] {
  return (pv.spec.nodeAffinity?.required?.nodeSelectorTerms ?? []).flatMap((t) =>
    (t.matchExpressions ?? []).filter((e) => e.key === key && e.operator === 'In').flatMap((e) => e.values ?? []),
  );
}

/** The emulated device of a volume on a node of the local stack (sparse file behind a loop device). */
export function emulatedDeviceFile(stack: LocalStack, node: string, volumeId: string): string {
  return join(stack.dir, 'nodes', node, 'state', 'emulated', `${volumeId}.img`);
}

/** Which node of the stack holds the volume's device file, if any. */
export function deviceNode(stack: LocalStack, volumeId: string): string | undefined {
  return stack.nodes.find((n) => existsSync(emulatedDeviceFile(stack, n.id, volumeId)))?.id;
}

/**
 * Detach the loop devices our node drivers left attached under `dir` (volumes of a failed test
 * that were never deleted), so that a failed run leaks no loop devices. Returns what it detached.
 */
export async function detachLoopsUnder(dir: string): Promise<string[]> {
  const list = await runTool('losetup', ['--list', '--json', '--output', 'NAME,BACK-FILE'], { timeoutMs: 10_000 });
  const devices = (
    (
      JSON.parse(list.stdout || '{"loopdevices":[]}') as {
        loopdevices?: Array<{ name: string; 'back-file'?: string | null }>;
      }
    ).loopdevices ?? []
  )
    .filter((l) => (l['back-file'] ?? '').startsWith(`${dir}/`))
    .map((l) => l.name);
  for (const dev of devices) await runTool('losetup', ['--detach', dev], { timeoutMs: 10_000 }).catch(() => undefined);
  return devices;
}

/** Stop a driver stack and detach any loop device its node drivers left (saying which). */
export async function stopStack(stack: LocalStack | undefined): Promise<void> {
  if (stack === undefined) return;
  await stack.stop().catch(() => undefined);
  const leaked = await detachLoopsUnder(stack.dir);
  if (leaked.length > 0) process.stdout.write(`detached loop devices left by the node drivers: ${leaked.join(', ')}\n`);
}
