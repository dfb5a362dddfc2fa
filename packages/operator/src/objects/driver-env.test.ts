// The driver's V8 options reach its pods (issue 28): the node DaemonSet's driver container carries
// the node mode's options in NODE_OPTIONS (@pmem-csi/csi DRIVER_V8_OPTIONS; the image runs both
// modes, so the pod says which limits apply), for every device mode; the registrar sidecar gets
// none, and the controller Deployment's driver container carries the controller mode's options (a
// young-generation bound and no old-generation limit); its sidecars get none.
import { OFFERED_DEVICE_MODES } from '@pmem-csi/api';
import { driverNodeOptions } from '@pmem-csi/csi';
import type { KubeObject } from '../kube/kube-port.js';
import { testContext, testDeployment } from '../testing/fixtures.js';
import { driverRuntimeEnv } from './pod-common.js';
import { buildDesiredObjects } from './registry.js';

interface Container {
  readonly name: string;
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value?: string }>;
}

function containers(objects: readonly KubeObject[], kind: string): readonly Container[] {
  const o = objects.find((x) => x.kind === kind) as unknown as
    { spec: { template: { spec: { containers: Container[] } } } } | undefined;
  if (o === undefined) throw new Error(`no ${kind} among the built objects`);
  return o.spec.template.spec.containers;
}

const nodeOptions = (c: Container | undefined): Array<string | undefined> =>
  (c?.env ?? []).filter((e) => e.name === 'NODE_OPTIONS').map((e) => e.value);

describe('NODE_OPTIONS of the driver containers', () => {
  it.each(OFFERED_DEVICE_MODES)('the node driver in %s mode gets the node heap limits', (deviceMode) => {
    const cr = testDeployment({ deviceMode });
    const objects = buildDesiredObjects(cr, testContext(cr)).map((d) => d.object);
    const [driver, ...sidecars] = containers(objects, 'DaemonSet');
    expect(driver?.name).toBe('pmem-driver');
    expect(nodeOptions(driver)).toEqual(['--max-semi-space-size=2 --max-old-space-size=64']);
    expect(nodeOptions(driver)).toEqual([driverNodeOptions('node')]);
    expect(driver?.env?.map((e) => e.name)).toEqual(['NODE_NAME', 'POD_IP', 'NODE_OPTIONS']);
    for (const sidecar of sidecars) expect(nodeOptions(sidecar)).toEqual([]);
  });

  it('the controller driver gets a bounded young generation and no old-generation limit', () => {
    const cr = testDeployment({});
    const objects = buildDesiredObjects(cr, testContext(cr)).map((d) => d.object);
    const [driver, ...sidecars] = containers(objects, 'Deployment');
    expect(driver?.name).toBe('pmem-driver');
    expect(nodeOptions(driver)).toEqual(['--max-semi-space-size=4']);
    expect(nodeOptions(driver)).toEqual([driverNodeOptions('controller')]);
    expect(sidecars.length).toBeGreaterThan(0);
    for (const sidecar of sidecars) expect(nodeOptions(sidecar)).toEqual([]);
  });

  it("each mode's options are one NODE_OPTIONS variable", () => {
    expect(driverRuntimeEnv('controller')).toEqual([{ name: 'NODE_OPTIONS', value: '--max-semi-space-size=4' }]);
    expect(driverRuntimeEnv('node')).toEqual([
      { name: 'NODE_OPTIONS', value: '--max-semi-space-size=2 --max-old-space-size=64' },
    ]);
  });
});
