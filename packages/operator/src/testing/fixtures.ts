// Shared test inputs: PmemCSIDeployment objects of the golden variants and a build context with
// fixed, fake certificate text (builders only copy it; real certificates are tested in certs.test.ts).
import { API_GROUP_VERSION, KIND, withDefaults, type PmemCSIDeploymentSpec } from '@pmem-csi/api';
import type { BuildContext, CertificateSecrets, OwnerDeployment } from '../objects/context.js';

export const TEST_NAMESPACE = 'pmem-csi';
export const TEST_OPERATOR_IMAGE = 'example.org/pmem-csi-driver:v0.1.0';
export const TEST_VERSION = '0.1.0';

export function testDeployment(spec: PmemCSIDeploymentSpec = {}, name = 'pmem-csi.intel.com'): OwnerDeployment {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: KIND,
    metadata: { name, uid: '6f1b3c2a-0000-4000-8000-000000000001', generation: 1, resourceVersion: '1' },
    spec,
  };
}

const pem = (what: string): string =>
  `-----BEGIN CERTIFICATE-----\n${Buffer.from(what).toString('base64')}\n-----END CERTIFICATE-----\n`;
const key = (what: string): string =>
  `-----BEGIN PRIVATE KEY-----\n${Buffer.from(what).toString('base64')}\n-----END PRIVATE KEY-----\n`;

export const FAKE_CERTS: CertificateSecrets = {
  registry: { caBundlePem: pem('ca'), certPem: pem('registry'), keyPem: key('registry') },
  node: { caBundlePem: pem('ca'), certPem: pem('node'), keyPem: key('node') },
  ca: { caBundlePem: pem('ca'), certPem: pem('ca'), keyPem: key('ca') },
};

export function testContext(cr: OwnerDeployment, overrides: Partial<BuildContext> = {}): BuildContext {
  return {
    namespace: TEST_NAMESPACE,
    operatorVersion: TEST_VERSION,
    spec: withDefaults(cr.spec, { operatorImage: TEST_OPERATOR_IMAGE }),
    certs: FAKE_CERTS,
    ...overrides,
  };
}

/** The golden variants: name -> spec. */
export const GOLDEN_VARIANTS: Readonly<Record<string, PmemCSIDeploymentSpec>> = {
  defaults: {},
  'direct-custom': {
    deviceMode: 'direct',
    provisionerImage: 'example.org/csi-provisioner:v9.9.9',
    nodeRegistrarImage: 'example.org/csi-node-driver-registrar:v9.9.9',
    resizerImage: 'example.org/csi-resizer:v9.9.9',
    imagePullPolicy: 'Always',
    controllerDriverResources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
    nodeDriverResources: { requests: { cpu: 1, memory: '512Mi' } },
    provisionerResources: { limits: { cpu: '200m' } },
    nodeRegistrarResources: { requests: { memory: '32Mi' } },
    resizerResources: { requests: { cpu: '5m' }, limits: { memory: '64Mi' } },
    nodeSelector: { 'feature.node.kubernetes.io/memory-nv.dax': 'true' },
    labels: { team: 'storage', 'example.org/tier': 'gold' },
    logFormat: 'json',
    logLevel: 5,
    pmemPercentage: 50,
    kubeletDir: '/var/lib/k0s/kubelet',
    controllerReplicas: 1,
    maxUnavailable: '25%',
  },
  'pinned-image': { image: 'example.org/pmem-csi-driver:v0.0.9-pinned' },
  emulated: { deviceMode: 'emulated', emulatedSize: '1536Mi', nodeSelector: {} },
  // Highly available controller (issue 17): rolling updates, minReadySeconds, a disruption budget.
  'ha-controller': { controllerReplicas: 3 },
};
