import {
  DEFAULT_DRIVER_NAME,
  FIELD_MANAGER,
  LABEL_KEYS,
  deploymentObjectNames,
  validateDeployment,
} from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import { CONFIG_HASH_ANNOTATION, OPERATOR_VERSION_ANNOTATION } from '@pmem-csi/api';
import { buildDesiredObjects } from '../objects/registry.js';
import { FAKE_CERTS } from '../testing/fixtures.js';
import { DEFAULT_DRIVER_IMAGE } from './images.js';
import {
  STANDALONE_MANAGED_BY,
  standaloneContext,
  standaloneDeployment,
  standaloneDriverObjects,
  toStandalone,
} from './standalone.js';
import { DRIVER_VARIANTS } from './variants.js';

interface Container {
  name: string;
  image: string;
  args: string[];
}
interface PodSpec {
  containers: Container[];
  volumes: { name: string; secret?: { secretName: string } }[];
}
const podSpec = (o: KubeObject | undefined): PodSpec =>
  (o as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
const names = deploymentObjectNames(DEFAULT_DRIVER_NAME);

describe('the driver without the operator', () => {
  for (const variant of DRIVER_VARIANTS) {
    describe(variant.id, () => {
      const options = { spec: variant.spec, namespace: 'pmem-csi' };
      const objects = standaloneDriverObjects(options);
      const find = (kind: string): KubeObject | undefined => objects.find((o) => o.kind === kind);

      it('is built from a valid PmemCSIDeployment', () => {
        expect(validateDeployment(standaloneDeployment(options))).toEqual([]);
      });

      it('is what the operator builds, minus Secrets, owner references and operator annotations', () => {
        const cr = {
          ...standaloneDeployment(options),
          metadata: { name: DEFAULT_DRIVER_NAME, uid: '6f1b3c2a-0000-4000-8000-000000000001' },
        };
        const operatorBuilt = buildDesiredObjects(cr, { ...standaloneContext(options), certs: FAKE_CERTS }).map(
          (d) => d.object,
        );
        expect(operatorBuilt.filter((o) => o.kind !== 'Secret').map((o) => toStandalone(o))).toEqual(objects);
        expect(operatorBuilt.map((o) => o.kind)).toContain('Secret');
      });

      it('has no owner references, no operator annotations, and says it is managed by kustomize', () => {
        for (const o of objects) {
          expect(o.metadata.ownerReferences).toBeUndefined();
          expect(o.metadata.annotations?.[OPERATOR_VERSION_ANNOTATION]).toBeUndefined();
          expect(o.metadata.labels?.[LABEL_KEYS.managedBy]).toBe(STANDALONE_MANAGED_BY);
          expect(JSON.stringify(o)).not.toContain(`"${FIELD_MANAGER}"`);
          expect(JSON.stringify(o)).not.toContain(CONFIG_HASH_ANNOTATION);
        }
        expect(objects.map((o) => o.kind)).not.toContain('Secret');
      });

      it('mounts the Secrets that make-certs creates', () => {
        expect(podSpec(find('Deployment')).volumes.find((v) => v.secret)?.secret?.secretName).toBe(
          names.registrySecret,
        );
        expect(podSpec(find('DaemonSet')).volumes.find((v) => v.secret)?.secret?.secretName).toBe(names.nodeSecret);
      });

      it(`runs ${DEFAULT_DRIVER_IMAGE} in ${variant.deviceMode} mode at the ${variant.profile} log level`, () => {
        const level = variant.profile === 'testing' ? '--v=5' : '--v=3';
        const containers = [...podSpec(find('Deployment')).containers, ...podSpec(find('DaemonSet')).containers];
        expect(containers.map((c) => c.args.includes(level))).toEqual(containers.map(() => true));
        expect(containers.filter((c) => c.name === 'pmem-driver').map((c) => c.image)).toEqual([
          DEFAULT_DRIVER_IMAGE,
          DEFAULT_DRIVER_IMAGE,
        ]);
        expect(podSpec(find('DaemonSet')).containers[0]?.args).toContain(`--device-mode=${variant.deviceMode}`);
      });

      const replicas = variant.profile === 'production-ha' ? 2 : 1;
      it(`runs ${replicas} controller replica(s)${replicas > 1 ? ' with a disruption budget' : ' and no disruption budget'}`, () => {
        expect((find('Deployment') as { spec?: { replicas?: number } } | undefined)?.spec?.replicas).toBe(replicas);
        expect(objects.filter((o) => o.kind === 'PodDisruptionBudget').map((o) => o.metadata.name)).toEqual(
          replicas > 1 ? [names.controllerDisruptionBudget] : [],
        );
      });
    });
  }

  it('has a highly available variant', () => {
    expect(DRIVER_VARIANTS.filter((v) => v.profile === 'production-ha').map((v) => v.id)).toEqual([
      'lvm-production-ha',
    ]);
  });
});
