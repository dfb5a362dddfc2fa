import type { KubeObject } from '../kube/kube-port.js';
import { deployedDeviceMode, deviceModeRefusal, volumesOfDriver } from './device-mode-guard.js';
import { DEVICE_MODE_ANNOTATION } from '@pmem-csi/api';

const ds = (annotations: Record<string, string>, args: string[]): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'n', annotations },
    spec: { selector: {}, template: { spec: { containers: [{ name: 'c', args }] } } },
  }) as KubeObject;
const pv = (name: string, driver?: string): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    ...(driver === undefined ? {} : { spec: { csi: { driver, volumeHandle: 'h' } } }),
  }) as KubeObject;

describe('device mode guard', () => {
  it("reads the deployed mode from the annotation, or from our or the Go operator's flags", () => {
    expect(deployedDeviceMode(ds({ [DEVICE_MODE_ANNOTATION]: 'direct' }, ['--device-mode=lvm']))).toBe('direct');
    expect(deployedDeviceMode(ds({}, ['--mode=node', '--device-mode=direct']))).toBe('direct');
    expect(deployedDeviceMode(ds({}, ['-deviceMode=lvm']))).toBe('lvm');
    expect(deployedDeviceMode(ds({ [DEVICE_MODE_ANNOTATION]: 'emulated' }, ['--device-mode=emulated']))).toBe(
      'emulated',
    );
    expect(deployedDeviceMode(ds({}, ['--device-mode=emulated', '--emulated-size=4294967296']))).toBe('emulated');
    expect(deployedDeviceMode(ds({}, ['--device-mode=fake']))).toBeUndefined();
    expect(deployedDeviceMode(undefined)).toBeUndefined();
  });

  it("reads the Go operator's -deviceManager from the driver container's command (v0.8 on) or args, ndctl as direct", () => {
    const goDs = (container: { command?: string[]; args?: string[] }): KubeObject =>
      ({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'pmem-csi-intel-com-node' },
        spec: { selector: {}, template: { spec: { containers: [{ name: 'pmem-driver', ...container }] } } },
      }) as KubeObject;
    const command = (mode: string): string[] => [
      '/usr/local/bin/pmem-csi-driver',
      `-deviceManager=${mode}`,
      '-v=3',
      '-mode=node',
      '-statePath=/var/lib/$(PMEM_CSI_DRIVER_NAME)',
    ];
    expect(deployedDeviceMode(goDs({ command: command('direct') }))).toBe('direct');
    expect(deployedDeviceMode(goDs({ command: command('lvm') }))).toBe('lvm');
    expect(deployedDeviceMode(goDs({ args: ['-deviceManager=ndctl', '-mode=node'] }))).toBe('direct');
    expect(deployedDeviceMode(goDs({ command: command('fake') }))).toBeUndefined();
  });

  it('finds the volumes of one driver only', () => {
    expect(volumesOfDriver([pv('b', 'd'), pv('a', 'd'), pv('c', 'other'), pv('hostpath')], 'd')).toEqual(['a', 'b']);
  });

  it('names at most five volumes', () => {
    const names = ['v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7'];
    expect(deviceModeRefusal('lvm', 'direct', 'd', names)).toBe(
      'spec.deviceMode: cannot change from lvm to direct while 7 volume(s) of driver d exist (v1, v2, v3, v4, v5, and 2 more); the driver keeps running in lvm mode. Delete those volumes, or set spec.deviceMode back to lvm',
    );
  });
});
