// Refusal of device-mode changes while volumes exist. LVM and direct mode lay PMEM out
// differently (volume groups vs. one namespace per volume); a node driver started in the other
// mode would not find existing volumes, and their data would be lost or leaked. The mode the
// driver runs with is recorded on the node DaemonSet; existing volumes are the PersistentVolumes
// whose spec.csi.driver is this driver.
import type { V1DaemonSet, V1PersistentVolume } from '@kubernetes/client-node';
import { OFFERED_DEVICE_MODES, type DeviceMode } from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import { DEVICE_MODE_ANNOTATION } from '@pmem-csi/api';
import { driverArgValue } from '@pmem-csi/csi';

const isDeviceMode = (v: string | undefined): v is DeviceMode =>
  v !== undefined && (OFFERED_DEVICE_MODES as readonly string[]).includes(v);

/** The device mode the deployed node DaemonSet runs with, if it can be told. */
export function deployedDeviceMode(daemonSet: KubeObject | undefined): DeviceMode | undefined {
  if (daemonSet === undefined) return undefined;
  const annotated = daemonSet.metadata.annotations?.[DEVICE_MODE_ANNOTATION];
  if (isDeviceMode(annotated)) return annotated;
  const containers = (daemonSet as V1DaemonSet).spec?.template.spec?.containers ?? [];
  // For DaemonSets without the annotation: the driver's --device-mode (also spelled -deviceMode),
  // read by the flag schema, or the Go operator's -deviceManager, which it put in the container's
  // command (v0.8 on) or args (earlier).
  for (const container of containers) {
    const mode = driverArgValue(container.args ?? [], 'device-mode') ?? goDeviceManager(container);
    if (isDeviceMode(mode)) return mode;
  }
  return undefined;
}

/** The Go driver's -deviceManager value of a container; "ndctl", its old name for direct, as direct. */
function goDeviceManager(container: { command?: string[]; args?: string[] }): string | undefined {
  for (const arg of [...(container.command ?? []), ...(container.args ?? [])]) {
    const m = /^--?deviceManager=(.*)$/s.exec(arg);
    if (m !== null) return m[1] === 'ndctl' ? 'direct' : m[1];
  }
  return undefined;
}

/** Names of the PersistentVolumes provisioned by `driverName`, sorted. */
export function volumesOfDriver(volumes: readonly KubeObject[], driverName: string): string[] {
  return volumes
    .filter((pv) => (pv as V1PersistentVolume).spec?.csi?.driver === driverName)
    .map((pv) => pv.metadata.name)
    .sort();
}

const SHOWN = 5;

/** The status reason for a refused change from `deployed` to `wanted` with `volumes` in use. */
export function deviceModeRefusal(
  deployed: DeviceMode,
  wanted: DeviceMode,
  driverName: string,
  volumes: readonly string[],
): string {
  const shown =
    volumes.slice(0, SHOWN).join(', ') + (volumes.length > SHOWN ? `, and ${volumes.length - SHOWN} more` : '');
  return `spec.deviceMode: cannot change from ${deployed} to ${wanted} while ${volumes.length} volume(s) of driver ${driverName} exist (${shown}); the driver keeps running in ${deployed} mode. Delete those volumes, or set spec.deviceMode back to ${deployed}`;
}
