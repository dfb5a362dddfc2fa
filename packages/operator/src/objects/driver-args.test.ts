// The agreement of the operator's builders with the driver binary (it was an e2e check): the
// arguments of the controller Deployment and the node DaemonSet, for every device mode the CRD
// offers, are accepted by the driver's flag schema (@pmem-csi/csi parseDriverFlags, the parser
// pmem-csi-driver runs) and mean what the spec says; and the device mode is read back from them.
import { OFFERED_DEVICE_MODES, type PmemCSIDeploymentSpec } from '@pmem-csi/api';
import { DRIVER_FLAGS, parseDriverFlags, readDriverArgs } from '@pmem-csi/csi';
import type { KubeObject } from '../kube/kube-port.js';
import { deployedDeviceMode } from '../plan/device-mode-guard.js';
import { testContext, testDeployment } from '../testing/fixtures.js';
import { buildDesiredObjects } from './registry.js';

const env = (a: string): string => a.replace('$(NODE_NAME)', 'node-1').replace('$(POD_IP)', '10.0.0.1');

function driverArgs(objects: readonly KubeObject[], kind: string): string[] {
  const o = objects.find((x) => x.kind === kind) as unknown as
    { spec: { template: { spec: { containers: { name: string; args?: string[] }[] } } } } | undefined;
  const container = o?.spec.template.spec.containers.find((c) => c.name === 'pmem-driver');
  if (container?.args === undefined) throw new Error(`no pmem-driver container with arguments in the ${kind}`);
  return container.args;
}

describe('driver arguments built by the operator', () => {
  for (const deviceMode of OFFERED_DEVICE_MODES) {
    it(`are accepted by the driver's flag schema and mean the spec (${deviceMode})`, () => {
      const spec: PmemCSIDeploymentSpec = { deviceMode, logLevel: 5, logFormat: 'json', pmemPercentage: 50 };
      const cr = testDeployment(spec);
      const objects = buildDesiredObjects(cr, testContext(cr)).map((d) => d.object);
      const controllerArgs = driverArgs(objects, 'Deployment');
      const nodeArgs = driverArgs(objects, 'DaemonSet');
      expect(parseDriverFlags(readDriverArgs(controllerArgs.map(env)))).toMatchObject({
        mode: 'controller',
        driverName: cr.metadata.name,
        verbosity: 5,
        logFormat: 'json',
      });
      expect(parseDriverFlags(readDriverArgs(nodeArgs.map(env)))).toMatchObject({
        mode: 'node',
        deviceMode,
        nodeId: 'node-1',
        advertisedEndpoint: '10.0.0.1:10001',
        pmemPercentage: 50,
        verbosity: 5,
        ...(deviceMode === 'emulated' ? { emulatedSize: 4 * 1024 ** 3 } : {}),
      });
      // Every argument is a flag of the schema, written --name=value.
      const names = new Set(DRIVER_FLAGS.map((f) => f.name));
      for (const arg of [...controllerArgs, ...nodeArgs])
        expect(names.has(/^--([^=]+)=/.exec(arg)?.[1] ?? arg)).toBe(true);
      const daemonSet = objects.find((o) => o.kind === 'DaemonSet');
      expect(daemonSet).toBeDefined();
      // Without the annotation, the mode is read from the arguments through the schema.
      const bare = { ...daemonSet, metadata: { ...daemonSet?.metadata, annotations: {} } } as KubeObject;
      expect(deployedDeviceMode(bare)).toBe(deviceMode);
      // cxlRegions left at its default adds no argument: existing DaemonSets stay as they were.
      expect(nodeArgs.some((a) => a.startsWith('--cxl-regions'))).toBe(false);
    });
  }

  for (const deviceMode of ['lvm', 'direct'] as const) {
    it(`spec.cxlRegions assemble becomes --cxl-regions=assemble on the node driver (${deviceMode})`, () => {
      const cr = testDeployment({ deviceMode, cxlRegions: 'assemble' });
      const objects = buildDesiredObjects(cr, testContext(cr)).map((d) => d.object);
      const nodeArgs = driverArgs(objects, 'DaemonSet');
      expect(nodeArgs).toContain('--cxl-regions=assemble');
      expect(parseDriverFlags(readDriverArgs(nodeArgs.map(env)))).toMatchObject({ deviceMode, cxlRegions: 'assemble' });
      expect(driverArgs(objects, 'Deployment').some((a) => a.startsWith('--cxl-regions'))).toBe(false);
    });
  }
});
