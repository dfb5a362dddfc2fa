import { SPEC_DEFAULTS } from './crd/values.js';
import { specSchema } from './crd/spec-schema.js';
import {
  DEFAULT_NODE_REGISTRAR_IMAGE,
  DEFAULT_PROVISIONER_IMAGE,
  DEFAULT_RESIZER_IMAGE,
  DEFAULT_RESOURCES,
  effectivePmemPercentage,
  emulatedSizeBytes,
  withDefaults,
  type DefaultedSpec,
} from './defaults.js';
import type { PmemCSIDeploymentSpec } from './generated/pmemcsideployment.js';

const OPERATOR_IMAGE = 'intel/pmem-csi-driver:v2.0.0';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

const EVERY_DEFAULT: DefaultedSpec = {
  image: OPERATOR_IMAGE,
  imagePullPolicy: 'IfNotPresent',
  provisionerImage: 'registry.k8s.io/sig-storage/csi-provisioner:v5.3.0',
  nodeRegistrarImage: 'registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0',
  resizerImage: 'registry.k8s.io/sig-storage/csi-resizer:v2.3.0',
  controllerDriverResources: { requests: { cpu: '12m', memory: '128Mi' } },
  nodeDriverResources: { requests: { cpu: '100m', memory: '250Mi' } },
  provisionerResources: { requests: { cpu: '12m', memory: '128Mi' } },
  nodeRegistrarResources: { requests: { cpu: '12m', memory: '128Mi' } },
  resizerResources: { requests: { cpu: '12m', memory: '128Mi' } },
  deviceMode: 'lvm',
  logLevel: 3,
  logFormat: 'text',
  nodeSelector: { storage: 'pmem' },
  pmemPercentage: 100,
  cxlRegions: 'manual',
  emulatedSize: '4Gi',
  labels: {},
  kubeletDir: '/var/lib/kubelet',
  controllerReplicas: 1,
  maxUnavailable: 1,
};

describe('withDefaults', () => {
  it('fills every field of an empty or missing spec', () => {
    expect(withDefaults({}, { operatorImage: OPERATOR_IMAGE })).toEqual(EVERY_DEFAULT);
    expect(withDefaults(undefined, { operatorImage: OPERATOR_IMAGE })).toEqual(EVERY_DEFAULT);
    expect(DEFAULT_PROVISIONER_IMAGE).toBe(EVERY_DEFAULT.provisionerImage);
    expect(DEFAULT_NODE_REGISTRAR_IMAGE).toBe(EVERY_DEFAULT.nodeRegistrarImage);
    expect(DEFAULT_RESIZER_IMAGE).toBe(EVERY_DEFAULT.resizerImage);
  });

  it('uses the operator image for the driver unless the spec pins one', () => {
    expect(withDefaults({}, { operatorImage: 'registry.example.com/pmem:v3' }).image).toBe(
      'registry.example.com/pmem:v3',
    );
    expect(withDefaults({ image: 'pinned/driver:v1' }, { operatorImage: OPERATOR_IMAGE }).image).toBe(
      'pinned/driver:v1',
    );
  });

  it('keeps every set field, including an explicit empty nodeSelector and pmemPercentage 0', () => {
    const spec: PmemCSIDeploymentSpec = {
      image: 'a/b:1',
      imagePullPolicy: 'Always',
      provisionerImage: 'p/q:2',
      nodeRegistrarImage: 'r/s:3',
      resizerImage: 't/u:4',
      controllerDriverResources: { limits: { memory: '1Gi' } },
      nodeDriverResources: { requests: { cpu: 1 } },
      provisionerResources: {},
      nodeRegistrarResources: { requests: { memory: '64Mi' }, limits: { memory: '64Mi' } },
      resizerResources: { limits: { cpu: '100m' } },
      deviceMode: 'direct',
      logLevel: 0,
      logFormat: 'json',
      nodeSelector: {},
      pmemPercentage: 0,
      cxlRegions: 'assemble',
      emulatedSize: 268435456,
      labels: { team: 'storage' },
      kubeletDir: '/var/snap/kubelet',
      controllerReplicas: 2,
      maxUnavailable: '25%',
      caCert: 'c',
      registryCert: 'rc',
      registryKey: 'rk',
      nodeControllerCert: 'nc',
      nodeControllerKey: 'nk',
    };
    expect(withDefaults(spec, { operatorImage: OPERATOR_IMAGE })).toEqual(spec);
  });

  it('treats null like unset (the apiserver prunes nulls)', () => {
    const spec = { deviceMode: null, nodeSelector: null } as unknown as PmemCSIDeploymentSpec;
    expect(withDefaults(spec, { operatorImage: OPERATOR_IMAGE })).toEqual(EVERY_DEFAULT);
  });

  it('never mutates the input and shares no objects with it or with the defaults', () => {
    const spec = deepFreeze<PmemCSIDeploymentSpec>({
      labels: { a: 'b' },
      nodeDriverResources: { requests: { cpu: '1' } },
    });
    const snapshot = structuredClone(spec);
    const result = withDefaults(spec, { operatorImage: OPERATOR_IMAGE });
    expect(spec).toEqual(snapshot);
    expect(Object.isFrozen(result.labels)).toBe(false);
    result.labels.c = 'd';
    result.nodeSelector.x = 'y';
    result.controllerDriverResources.requests = {};
    (result.nodeDriverResources.requests ?? {}).cpu = '2';
    expect(spec).toEqual(snapshot);
    expect(DEFAULT_RESOURCES.controllerDriverResources).toEqual({ requests: { cpu: '12m', memory: '128Mi' } });
    expect(SPEC_DEFAULTS.nodeSelector).toEqual({ storage: 'pmem' });
    expect(withDefaults({}, { operatorImage: OPERATOR_IMAGE })).toEqual(EVERY_DEFAULT);
  });

  it('agrees with every default written into the CRD schema', () => {
    const defaults = withDefaults({}, { operatorImage: OPERATOR_IMAGE }) as unknown as Record<string, unknown>;
    const schemaDefaults = Object.entries(specSchema.properties ?? {}).filter(([, s]) => s.default !== undefined);
    expect(schemaDefaults.map(([field]) => field).sort()).toEqual(Object.keys(SPEC_DEFAULTS).sort());
    for (const [field, schema] of schemaDefaults) expect([field, defaults[field]]).toEqual([field, schema.default]);
  });
});

describe('effectivePmemPercentage', () => {
  it.each<[number | undefined, number]>([
    [0, 100],
    [undefined, 100],
    [1, 1],
    [50, 50],
    [100, 100],
  ])('%p -> %p', (input, effective) => {
    expect(effectivePmemPercentage(input)).toBe(effective);
  });
});

describe('emulatedSizeBytes', () => {
  it.each<[unknown, number | undefined]>([
    ['4Gi', 4 * 1024 ** 3],
    ['64Mi', 64 * 1024 ** 2],
    ['1Ti', 1024 ** 4],
    ['1.5Gi', 1.5 * 1024 ** 3],
    ['5G', 5e9],
    [268435456, 268435456],
    ['268435456', 268435456],
    ['63Mi', undefined],
    ['1025Gi', undefined],
    ['2Ti', undefined],
    [67108863, undefined],
    [1.5, undefined],
    ['4GiB', undefined],
    ['100m', undefined],
    ['', undefined],
    [null, undefined],
    [{}, undefined],
  ])('%p -> %p', (input, bytes) => {
    expect(emulatedSizeBytes(input)).toBe(bytes);
  });
});
