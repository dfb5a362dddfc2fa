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
  // The driver's --device-mode (or the Go operator's -deviceMode), read by the flag schema, for DaemonSets without the annotation.
  for (const container of containers) {
    const mode = driverArgValue(container.args ?? [], 'device-mode');
    if (isDeviceMode(mode)) return mode;
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
