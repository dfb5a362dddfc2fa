// Start-up reconciliation of the node's volume records against the devices that really exist.
// Records are written before devices are made, so a record without a device is a create that never
// finished: it is dropped. A device without a record is an orphan: it is reported (log line and
// result, for a metric) and NEVER deleted, because it may hold someone's data and only a human can
// tell. Records of another device mode belong to another manager and are left alone.
import type { Logger } from '@pmem-csi/runtime';
import type { DeviceManager, PmemDeviceInfo } from '../device/device-manager.js';
import type { VolumeRecord } from './volume-record.js';
import type { VolumeStateStore } from './volume-store.js';

export interface ReconciledVolume {
  readonly record: VolumeRecord;
  readonly device: PmemDeviceInfo;
}

export interface ReconcileResult {
  /** Volumes with both a record and a device. */
  readonly volumes: ReconciledVolume[];
  /** Records removed because their device does not exist. */
  readonly droppedRecords: VolumeRecord[];
  /** Devices without a record (left in place). */
  readonly orphans: PmemDeviceInfo[];
  /** Records of a device mode other than the manager's (kept, not checked). */
  readonly otherModeRecords: VolumeRecord[];
}

/** Match records and devices; drop records without a device, report devices without a record. */
export async function reconcile(
  state: Pick<VolumeStateStore, 'list' | 'delete'>,
  dm: DeviceManager,
  log: Logger,
): Promise<ReconcileResult> {
  const records = await state.list();
  const devices = new Map((await dm.listDevices()).map((d) => [d.volumeId, d]));
  const result: ReconcileResult = { volumes: [], droppedRecords: [], orphans: [], otherModeRecords: [] };
  const recorded = new Set<string>();
  for (const record of records) {
    if (record.deviceMode !== dm.mode) {
      log.info('keeping volume record of another device mode', {
        volumeId: record.volumeId,
        deviceMode: record.deviceMode,
        managerMode: dm.mode,
      });
      result.otherModeRecords.push(record);
      continue;
    }
    recorded.add(record.volumeId);
    const device = devices.get(record.volumeId);
    if (device === undefined) {
      log.warn('dropping volume record without a device: its create never finished', {
        volumeId: record.volumeId,
        name: record.name,
      });
      await state.delete(record.volumeId);
      result.droppedRecords.push(record);
    } else {
      if (device.size < record.size)
        log.warn('device is smaller than its record says', {
          volumeId: record.volumeId,
          recordSize: record.size,
          deviceSize: device.size,
        });
      result.volumes.push({ record, device });
    }
  }
  for (const device of devices.values()) {
    if (recorded.has(device.volumeId)) continue;
    log.warn('orphaned device without a volume record; leaving it in place', {
      volumeId: device.volumeId,
      device: device.path,
      size: device.size,
    });
    result.orphans.push(device);
  }
  log.info('volume state reconciled', {
    volumes: result.volumes.length,
    droppedRecords: result.droppedRecords.length,
    orphans: result.orphans.length,
    otherModeRecords: result.otherModeRecords.length,
  });
  return result;
}
