import { goOperatorFieldFindings, userCertificates, validateDeployment, validateSpec } from './validate.js';

const SPEC_FIELDS =
  'image, imagePullPolicy, provisionerImage, nodeRegistrarImage, resizerImage, controllerDriverResources, nodeDriverResources, provisionerResources, nodeRegistrarResources, resizerResources, deviceMode, logLevel, logFormat, nodeSelector, pmemPercentage, cxlRegions, emulatedSize, labels, kubeletDir, controllerReplicas, maxUnavailable, caCert, registryCert, registryKey, nodeControllerCert, nodeControllerKey, controllerTLSSecret, mutatePods, schedulerNodePort';
const IMAGE = 'an image reference [registry[:port]/]repository[:tag][@digest], lowercase repository, no whitespace';
const LABEL_KEYS =
  "label keys ([prefix/]name: name at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit; prefix a DNS subdomain)";
const LABEL_VALUES =
  "label values (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, or empty)";
const EMULATED_SIZE = 'quantities from 64Mi (67108864 bytes) to 1Ti (1099511627776 bytes), e.g. 4Gi or 512Mi';
const QUANTITIES = 'non-negative quantities such as 100m, 0.5, 250Mi or 1Gi';
const DRIVER_NAME =
  "a DNS subdomain of at most 52 characters (lowercase letters, digits, '-' and '.') starting with a letter, because it is the CSI driver name and prefixes Service names";
const REPLICAS =
  'integers from 1 to 5 (every node registers with every replica; one replica provisions, the others stand by)';
const CERTS = 'PEM-encoded certificates (BEGIN CERTIFICATE)';
const KEY = 'an unencrypted PEM-encoded private key (BEGIN PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)';

// Shape-only PEM fixtures: validation does no cryptography.
const BODY =
  'MIIBszCCAVmgAwIBAgIUQk1FTS1DU0ktVEVTVC1GSVhUVVJFMAoGCCqGSM49BAMC\nMBIxEDAOBgNVBAMMB3BtZW0tY2EwHhcNMjYwMTAxMDAwMDAwWhcNMjcwMTAxMDAw\nMDAwWjA=';
const pem = (type: string, body = BODY): string => `-----BEGIN ${type}-----\n${body}\n-----END ${type}-----\n`;
const CERT = pem('CERTIFICATE');
const SECRET_BODY = 'U0VDUkVULUtFWS1NQVRFUklBTC1ETy1OT1QtTE9H';
const PRIVATE_KEY = pem('PRIVATE KEY', SECRET_BODY);
const ALL_CERTS = {
  caCert: CERT,
  registryCert: CERT + CERT,
  registryKey: PRIVATE_KEY,
  nodeControllerCert: CERT,
  nodeControllerKey: pem('EC PRIVATE KEY', SECRET_BODY),
};

function problem(path: string, value: string, allowed: string): { path: string; message: string } {
  return { path, message: `${path}: unsupported value ${value}; allowed values: ${allowed}` };
}

describe('validateSpec', () => {
  it('accepts an empty spec and a complete valid one', () => {
    expect(validateSpec({})).toEqual([]);
    expect(
      validateSpec({
        image: 'intel/pmem-csi-driver:v2.0.0',
        imagePullPolicy: 'Never',
        provisionerImage: 'registry.k8s.io/sig-storage/csi-provisioner:v5.3.0',
        nodeRegistrarImage: `localhost:5000/sig-storage/registrar@sha256:${'a'.repeat(64)}`,
        controllerDriverResources: { requests: { cpu: '100m', memory: '250Mi' }, limits: { memory: 1073741824 } },
        nodeDriverResources: { limits: { 'hugepages-2Mi': '1Gi', 'example.com/dev': 1 } },
        provisionerResources: {},
        nodeRegistrarResources: { requests: { cpu: '0.5' } },
        resizerImage: 'registry.k8s.io/sig-storage/csi-resizer:v2.3.0',
        resizerResources: { limits: { memory: '256Mi' } },
        deviceMode: 'direct',
        logLevel: 10,
        logFormat: 'json',
        nodeSelector: { 'feature.node.kubernetes.io/memory-nv.present': 'true', storage: '' },
        pmemPercentage: 0,
        emulatedSize: '1.5Gi',
        labels: { team: 'storage', 'example.com/cost-center': 'a_1.b-2' },
        kubeletDir: '/var/lib/kubelet/',
        controllerReplicas: 1,
        maxUnavailable: '100%',
        ...ALL_CERTS,
      }),
    ).toEqual([]);
  });

  it('accepts every offered device mode, emulated with a size as a quantity or in bytes', () => {
    for (const deviceMode of ['lvm', 'direct', 'emulated']) expect(validateSpec({ deviceMode })).toEqual([]);
    expect(validateSpec({ deviceMode: 'emulated', emulatedSize: '512Mi' })).toEqual([]);
    expect(validateSpec({ deviceMode: 'emulated', emulatedSize: 1099511627776 })).toEqual([]);
    expect(validateSpec({ deviceMode: 'emulated', emulatedSize: '64Mi' })).toEqual([]);
  });

  it('cxlRegions: manual or assemble; assemble only in the modes with PMEM regions (lvm, direct)', () => {
    expect(validateSpec({ cxlRegions: 'assemble' })).toEqual([]); // lvm, the default mode
    expect(validateSpec({ deviceMode: 'direct', cxlRegions: 'assemble' })).toEqual([]);
    expect(validateSpec({ deviceMode: 'emulated', cxlRegions: 'manual' })).toEqual([]);
    expect(validateSpec({ deviceMode: 'emulated', cxlRegions: 'assemble' })).toEqual([
      {
        path: 'spec.cxlRegions',
        message:
          'spec.cxlRegions: "assemble" needs deviceMode lvm or direct (deviceMode "emulated" uses no PMEM regions); allowed values here: manual',
      },
    ]);
    expect(validateSpec({ cxlRegions: 'yes' }).map((p) => p.message)).toEqual([
      'spec.cxlRegions: unsupported value "yes"; allowed values: manual, assemble',
    ]);
  });

  it('accepts every controller replica count from 1 to 5 (issue 17 lifted the cap of 1)', () => {
    for (const controllerReplicas of [1, 2, 3, 4, 5]) expect(validateSpec({ controllerReplicas })).toEqual([]);
  });

  it('treats null and undefined fields and empty certificate fields as unset', () => {
    expect(validateSpec({ deviceMode: null, labels: undefined, caCert: '', registryKey: '' })).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    ['spec', 'lvm', problem('spec', '"lvm"', 'an object').message],
    ['spec', [], problem('spec', '[]', 'an object').message],
  ])('rejects a spec that is not an object (%s = %j)', (path, value, message) => {
    expect(validateSpec(value)).toEqual([{ path, message }]);
  });

  it('rejects unknown fields and names the allowed ones', () => {
    expect(validateSpec({ devicemode: 'lvm' })).toEqual([
      { path: 'spec.devicemode', message: `spec.devicemode: unknown field; allowed fields: ${SPEC_FIELDS}` },
    ]);
  });

  it('uses the given path prefix', () => {
    expect(validateSpec({ deviceMode: 'fake' }, 'items[0].spec')).toEqual([
      problem('items[0].spec.deviceMode', '"fake"', 'lvm, direct, emulated'),
    ]);
  });

  type Case = [field: string, value: unknown, expected: { path: string; message: string }[]];
  it.each<Case>([
    ['deviceMode', 'fake', [problem('spec.deviceMode', '"fake"', 'lvm, direct, emulated')]],
    ['deviceMode', 'Emulated', [problem('spec.deviceMode', '"Emulated"', 'lvm, direct, emulated')]],
    ['deviceMode', 'LVM', [problem('spec.deviceMode', '"LVM"', 'lvm, direct, emulated')]],
    ['emulatedSize', '63Mi', [problem('spec.emulatedSize', '"63Mi"', EMULATED_SIZE)]],
    ['emulatedSize', '1025Gi', [problem('spec.emulatedSize', '"1025Gi"', EMULATED_SIZE)]],
    ['emulatedSize', 67108863, [problem('spec.emulatedSize', '67108863', EMULATED_SIZE)]],
    ['emulatedSize', '4 Gi', [problem('spec.emulatedSize', '"4 Gi"', EMULATED_SIZE)]],
    ['emulatedSize', '-4Gi', [problem('spec.emulatedSize', '"-4Gi"', EMULATED_SIZE)]],
    ['emulatedSize', '4000m', [problem('spec.emulatedSize', '"4000m"', EMULATED_SIZE)]],
    ['emulatedSize', 4.5e9 + 0.5, [problem('spec.emulatedSize', '4500000000.5', EMULATED_SIZE)]],
    ['emulatedSize', true, [problem('spec.emulatedSize', 'true', EMULATED_SIZE)]],
    ['imagePullPolicy', 'always', [problem('spec.imagePullPolicy', '"always"', 'Always, IfNotPresent, Never')]],
    ['logFormat', 'xml', [problem('spec.logFormat', '"xml"', 'text, json')]],
    ['logFormat', 1, [problem('spec.logFormat', '1', 'text, json')]],
    ['logLevel', 11, [problem('spec.logLevel', '11', 'integers from 0 to 10')]],
    ['logLevel', -1, [problem('spec.logLevel', '-1', 'integers from 0 to 10')]],
    ['logLevel', 2.5, [problem('spec.logLevel', '2.5', 'integers from 0 to 10')]],
    ['logLevel', '3', [problem('spec.logLevel', '"3"', 'integers from 0 to 10')]],
    ['pmemPercentage', 101, [problem('spec.pmemPercentage', '101', 'integers from 0 to 100 (0 means 100)')]],
    ['pmemPercentage', -5, [problem('spec.pmemPercentage', '-5', 'integers from 0 to 100 (0 means 100)')]],
    ['controllerReplicas', 0, [problem('spec.controllerReplicas', '0', REPLICAS)]],
    ['controllerReplicas', 1.5, [problem('spec.controllerReplicas', '1.5', REPLICAS)]],
    ['controllerReplicas', 6, [problem('spec.controllerReplicas', '6', REPLICAS)]],
    ['controllerReplicas', '2', [problem('spec.controllerReplicas', '"2"', REPLICAS)]],
    [
      'maxUnavailable',
      0,
      [problem('spec.maxUnavailable', '0', 'an integer of at least 1 or a percentage from 1% to 100%')],
    ],
    [
      'maxUnavailable',
      '0%',
      [problem('spec.maxUnavailable', '"0%"', 'an integer of at least 1 or a percentage from 1% to 100%')],
    ],
    [
      'maxUnavailable',
      '101%',
      [problem('spec.maxUnavailable', '"101%"', 'an integer of at least 1 or a percentage from 1% to 100%')],
    ],
    [
      'maxUnavailable',
      '2',
      [problem('spec.maxUnavailable', '"2"', 'an integer of at least 1 or a percentage from 1% to 100%')],
    ],
    ['image', '', [problem('spec.image', '""', IMAGE)]],
    ['image', 'my image:v1', [problem('spec.image', '"my image:v1"', IMAGE)]],
    ['image', 'intel/PMEM-csi:v1', [problem('spec.image', '"intel/PMEM-csi:v1"', IMAGE)]],
    ['image', 'intel/pmem-csi:v1:v2', [problem('spec.image', '"intel/pmem-csi:v1:v2"', IMAGE)]],
    ['image', 'intel/pmem-csi:', [problem('spec.image', '"intel/pmem-csi:"', IMAGE)]],
    ['image', 'intel/pmem-csi@sha256:abc', [problem('spec.image', '"intel/pmem-csi@sha256:abc"', IMAGE)]],
    ['image', 42, [problem('spec.image', '42', IMAGE)]],
    ['provisionerImage', 'a\tb', [problem('spec.provisionerImage', '"a\\tb"', IMAGE)]],
    ['nodeRegistrarImage', ' registrar', [problem('spec.nodeRegistrarImage', '" registrar"', IMAGE)]],
    ['resizerImage', 'Resizer:1', [problem('spec.resizerImage', '"Resizer:1"', IMAGE)]],
    [
      'kubeletDir',
      'var/lib/kubelet',
      [problem('spec.kubeletDir', '"var/lib/kubelet"', "an absolute path without '.' or '..' segments")],
    ],
    [
      'kubeletDir',
      '/var/lib/../kubelet',
      [problem('spec.kubeletDir', '"/var/lib/../kubelet"', "an absolute path without '.' or '..' segments")],
    ],
    ['kubeletDir', '', [problem('spec.kubeletDir', '""', "an absolute path without '.' or '..' segments")]],
    [
      'nodeSelector',
      'storage=pmem',
      [problem('spec.nodeSelector', '"storage=pmem"', 'a map of label keys to label values')],
    ],
    [
      'nodeSelector',
      { 'bad key': 'x' },
      [
        {
          path: 'spec.nodeSelector',
          message: `spec.nodeSelector: unsupported key "bad key"; allowed keys: ${LABEL_KEYS}`,
        },
      ],
    ],
    [
      'nodeSelector',
      { 'Example.com/x': 'x' },
      [
        {
          path: 'spec.nodeSelector',
          message: `spec.nodeSelector: unsupported key "Example.com/x"; allowed keys: ${LABEL_KEYS}`,
        },
      ],
    ],
    [
      'nodeSelector',
      { [`k${'x'.repeat(70)}`]: 'x' },
      [
        {
          path: 'spec.nodeSelector',
          message: `spec.nodeSelector: unsupported key "k${'x'.repeat(60)}..."; allowed keys: ${LABEL_KEYS}`,
        },
      ],
    ],
    [
      'nodeSelector',
      { [`k${'x'.repeat(63)}`]: 'x' },
      [
        {
          path: 'spec.nodeSelector',
          message: `spec.nodeSelector: unsupported key "k${'x'.repeat(63)}"; allowed keys: ${LABEL_KEYS}`,
        },
      ],
    ],
    ['nodeSelector', { storage: 'pm em' }, [problem('spec.nodeSelector["storage"]', '"pm em"', LABEL_VALUES)]],
    ['nodeSelector', { storage: true }, [problem('spec.nodeSelector["storage"]', 'true', LABEL_VALUES)]],
    [
      'labels',
      { 'a/b/c': 'x', ok: '-bad' },
      [
        { path: 'spec.labels', message: `spec.labels: unsupported key "a/b/c"; allowed keys: ${LABEL_KEYS}` },
        problem('spec.labels["ok"]', '"-bad"', LABEL_VALUES),
      ],
    ],
    [
      'labels',
      { 'app.kubernetes.io/instance': 'mine' },
      [
        {
          path: 'spec.labels',
          message:
            'spec.labels: unsupported key "app.kubernetes.io/instance"; allowed keys: any label key except those the operator sets itself (app.kubernetes.io/name, app.kubernetes.io/instance, app.kubernetes.io/component, app.kubernetes.io/part-of, app.kubernetes.io/managed-by)',
        },
      ],
    ],
    [
      'controllerDriverResources',
      'small',
      [problem('spec.controllerDriverResources', '"small"', 'an object with limits and/or requests')],
    ],
    [
      'nodeDriverResources',
      { request: {} },
      [
        {
          path: 'spec.nodeDriverResources.request',
          message: 'spec.nodeDriverResources.request: unknown field; allowed fields: limits, requests',
        },
      ],
    ],
    [
      'provisionerResources',
      { limits: ['1Gi'] },
      [problem('spec.provisionerResources.limits', '["1Gi"]', 'a map of resource names to quantities')],
    ],
    [
      'resizerResources',
      { limits: { memory: '1 Gi' } },
      [problem('spec.resizerResources.limits["memory"]', '"1 Gi"', QUANTITIES)],
    ],
    [
      'nodeRegistrarResources',
      { requests: { cpu: 'lots', memory: '-1Gi', storage: -1, 'bad name': '1' } },
      [
        problem('spec.nodeRegistrarResources.requests["cpu"]', '"lots"', QUANTITIES),
        problem('spec.nodeRegistrarResources.requests["memory"]', '"-1Gi"', QUANTITIES),
        problem('spec.nodeRegistrarResources.requests["storage"]', '-1', QUANTITIES),
        {
          path: 'spec.nodeRegistrarResources.requests',
          message:
            'spec.nodeRegistrarResources.requests: unsupported key "bad name"; allowed keys: resource names such as cpu, memory, ephemeral-storage or hugepages-2Mi',
        },
      ],
    ],
  ])('%s = %j', (field, value, expected) => {
    expect(validateSpec({ [field]: value })).toEqual(expected);
  });

  describe('certificates', () => {
    const missing = (field: string): { path: string; message: string } => ({
      path: `spec.${field}`,
      message: `spec.${field}: required because another certificate field is set; allowed values: all of caCert, registryCert, registryKey, nodeControllerCert, nodeControllerKey, or none`,
    });

    it('requires all five or none', () => {
      expect(validateSpec({ caCert: CERT, registryCert: CERT, registryKey: PRIVATE_KEY })).toEqual([
        missing('nodeControllerCert'),
        missing('nodeControllerKey'),
      ]);
      expect(validateSpec({ ...ALL_CERTS, nodeControllerKey: '' })).toEqual([missing('nodeControllerKey')]);
    });

    it.each<[string, string, string]>([
      ['caCert', PRIVATE_KEY, CERTS],
      ['caCert', 'not pem at all', CERTS],
      ['registryCert', CERT + PRIVATE_KEY, CERTS],
      ['nodeControllerCert', BODY, CERTS],
      ['nodeControllerCert', pem('CERTIFICATE', 'not base64!'), CERTS],
      ['registryKey', CERT, KEY],
      ['registryKey', PRIVATE_KEY + PRIVATE_KEY, KEY],
      ['registryKey', pem('ENCRYPTED PRIVATE KEY', SECRET_BODY), KEY],
      [
        'nodeControllerKey',
        pem('RSA PRIVATE KEY', `Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\n${SECRET_BODY}`),
        KEY,
      ],
      ['nodeControllerKey', `-----BEGIN RSA PRIVATE KEY-----\n${SECRET_BODY}\n-----END EC PRIVATE KEY-----`, KEY],
    ])('checks the PEM shape of %s and never shows the value', (field, value, allowed) => {
      const problems = validateSpec({ ...ALL_CERTS, [field]: value });
      expect(problems).toEqual([
        { path: `spec.${field}`, message: `spec.${field}: invalid value (not shown); allowed values: ${allowed}` },
      ]);
      expect(JSON.stringify(problems)).not.toContain('U0VDUkVU');
    });

    it('rejects a non-string certificate without showing it', () => {
      expect(validateSpec({ ...ALL_CERTS, registryKey: { key: SECRET_BODY } })).toEqual([
        { path: 'spec.registryKey', message: `spec.registryKey: invalid value (not shown); allowed values: ${KEY}` },
      ]);
    });
  });

  it('reports every problem at once', () => {
    expect(validateSpec({ deviceMode: 'fake', logLevel: 99, extra: 1, caCert: CERT })).toHaveLength(3 + 4);
  });
});

describe("the Go operator's fields (controllerTLSSecret, mutatePods, schedulerNodePort)", () => {
  const NO_EXTENDER =
    'this driver has no scheduler extender and no pod webhook: storage capacity tracking (CSIStorageCapacity) lets the default kube-scheduler place pods with late-binding PMEM volumes on nodes with room';
  const REMOVE_EXTENDER =
    "remove the field; if the kube-scheduler's configuration names the Go driver's extender (the <prefix>-scheduler Service), remove it there first, as the Service goes with the Go driver";

  it('accepts the values that meant no scheduler extender and no pod webhook, and says so', () => {
    const spec = { controllerTLSSecret: '', mutatePods: 'Try', schedulerNodePort: 0 };
    expect(validateSpec(spec)).toEqual([]);
    expect(validateSpec({ mutatePods: 'Never' })).toEqual([]);
    expect(goOperatorFieldFindings(spec)).toEqual([
      {
        field: 'controllerTLSSecret',
        path: 'spec.controllerTLSSecret',
        value: '',
        accepted: true,
        message:
          'spec.controllerTLSSecret: "" accepted: without a Secret the Go operator started neither its scheduler extender nor its pod webhook, as here',
      },
      {
        field: 'mutatePods',
        path: 'spec.mutatePods',
        value: 'Try',
        accepted: true,
        message:
          'spec.mutatePods: "Try" accepted: the Go webhook was best effort (pods were created when it did not answer); this driver has none, pods are created unchanged',
      },
      {
        field: 'schedulerNodePort',
        path: 'spec.schedulerNodePort',
        value: 0,
        accepted: true,
        message: 'spec.schedulerNodePort: 0 accepted: no node port for a scheduler extender, as this driver has none',
      },
    ]);
  });

  it('finds nothing in a spec without them (null is unset)', () => {
    expect(goOperatorFieldFindings({ deviceMode: 'lvm', mutatePods: null })).toEqual([]);
    expect(goOperatorFieldFindings(undefined)).toEqual([]);
  });

  it.each<[string, unknown, string, string]>([
    [
      'controllerTLSSecret',
      'pmem-csi-webhooks',
      '"pmem-csi-webhooks"',
      `"" or unset (${NO_EXTENDER}); ${REMOVE_EXTENDER}`,
    ],
    [
      'mutatePods',
      'Always',
      '"Always"',
      `Try, Never or unset ("Always" made pod creation fail without the Go driver's pod webhook; ${NO_EXTENDER}); remove the field or set it to Never`,
    ],
    [
      'mutatePods',
      'always',
      '"always"',
      `Try, Never or unset ("Always" made pod creation fail without the Go driver's pod webhook; ${NO_EXTENDER}); remove the field or set it to Never`,
    ],
    ['schedulerNodePort', 32000, '32000', `0 or unset (${NO_EXTENDER}); ${REMOVE_EXTENDER}`],
    ['schedulerNodePort', '32000', '"32000"', `0 or unset (${NO_EXTENDER}); ${REMOVE_EXTENDER}`],
  ])('refuses %s = %j, naming the field, the value and what to do', (field, value, shown, allowed) => {
    const expected = problem(`spec.${field}`, shown, allowed);
    expect(validateSpec({ [field]: value })).toEqual([expected]);
    expect(goOperatorFieldFindings({ [field]: value })).toEqual([
      { field, path: `spec.${field}`, value, accepted: false, message: expected.message },
    ]);
  });

  it("refuses the Go driver's image as spec.image (a Go user's pin), also from a mirror, and nothing else", () => {
    const allowed =
      "an image of this driver, or unset for the operator's own (intel/pmem-csi-driver with a v0.x or v1.x tag is the Go driver's image, which does not take this driver's flags: its pods would fail to start); remove the field";
    for (const image of [
      'intel/pmem-csi-driver:v1.0.2',
      'docker.io/intel/pmem-csi-driver:v1.1.0',
      'registry.example.org:5000/intel/pmem-csi-driver:v1.0.2',
      'localhost/intel/pmem-csi-driver:0.9.1',
    ])
      expect(validateSpec({ image })).toEqual([problem('spec.image', JSON.stringify(image), allowed)]);
    for (const image of [
      'pmem-csi-driver:v0.1.0',
      'registry.example.org/intel/pmem-csi-driver-ts:v1',
      'example.org/pmem-csi-driver',
    ])
      expect(validateSpec({ image })).toEqual([]);
    // The sidecar images are not the driver's: a pinned Go sidecar is taken as given.
    expect(validateSpec({ provisionerImage: 'k8s.gcr.io/sig-storage/csi-provisioner:v2.2.1' })).toEqual([]);
  });

  it('reports each refused field at once, with the accepted ones left out of the problems', () => {
    const problems = validateSpec({ controllerTLSSecret: 'tls', mutatePods: 'Always', schedulerNodePort: 0 });
    expect(problems.map((p) => p.path)).toEqual(['spec.controllerTLSSecret', 'spec.mutatePods']);
  });
});

describe('validateDeployment', () => {
  const valid = {
    apiVersion: 'pmem-csi.intel.com/v1beta1',
    kind: 'PmemCSIDeployment',
    metadata: { name: 'pmem-csi.intel.com' },
    spec: { deviceMode: 'lvm' },
  };

  it('accepts a valid object, also without apiVersion/kind or spec', () => {
    expect(validateDeployment(valid)).toEqual([]);
    expect(validateDeployment({ metadata: { name: 'pmem' } })).toEqual([]);
  });

  it.each<[unknown, { path: string; message: string }[]]>([
    [null, [problem('object', 'null', 'a PmemCSIDeployment object')]],
    ['x', [problem('object', '"x"', 'a PmemCSIDeployment object')]],
    [
      { ...valid, apiVersion: 'pmem-csi.intel.com/v1alpha1' },
      [problem('apiVersion', '"pmem-csi.intel.com/v1alpha1"', 'pmem-csi.intel.com/v1beta1')],
    ],
    [{ ...valid, kind: 'Deployment' }, [problem('kind', '"Deployment"', 'PmemCSIDeployment')]],
    [{ ...valid, metadata: {} }, [problem('metadata.name', '(missing)', DRIVER_NAME)]],
    [{ ...valid, metadata: undefined }, [problem('metadata.name', '(missing)', DRIVER_NAME)]],
    [{ ...valid, metadata: { name: 'PMEM' } }, [problem('metadata.name', '"PMEM"', DRIVER_NAME)]],
    [
      { ...valid, metadata: { name: '1pmem.example.com' } },
      [problem('metadata.name', '"1pmem.example.com"', DRIVER_NAME)],
    ],
    [
      { ...valid, metadata: { name: 'pmem..example.com' } },
      [problem('metadata.name', '"pmem..example.com"', DRIVER_NAME)],
    ],
    [{ ...valid, metadata: { name: 'pmem-' } }, [problem('metadata.name', '"pmem-"', DRIVER_NAME)]],
    [
      { ...valid, metadata: { name: `a${'b'.repeat(52)}` } },
      [problem('metadata.name', `"a${'b'.repeat(52)}"`, DRIVER_NAME)],
    ],
    // Its provisioner Lease would be the operator's own Lease (same name, same namespace).
    ...['pmem-csi-operator', 'pmem.csi.operator', 'pmem-csi.operator'].map(
      (name): [unknown, { path: string; message: string }[]] => [
        { ...valid, metadata: { name } },
        [
          problem(
            'metadata.name',
            `"${name}"`,
            `${DRIVER_NAME}, except names that external-provisioner's leader election would turn into the operator's own Lease name "pmem-csi-operator" ('.' becomes '-')`,
          ),
        ],
      ],
    ),
    // Its provisioner Lease would be the resizer Lease of driver "foo.example.com" (or "foo-example-com").
    ...['external-resizer.foo.example.com', 'external-resizer-foo-example-com', 'external-resizer.x'].map(
      (name): [unknown, { path: string; message: string }[]] => [
        { ...valid, metadata: { name } },
        [
          problem(
            'metadata.name',
            `"${name}"`,
            `${DRIVER_NAME}, except names starting with "external-resizer" and '-' or '.', whose external-provisioner Lease would be the external-resizer Lease of the driver named by the rest`,
          ),
        ],
      ],
    ),
    [{ ...valid, spec: { deviceMode: 'fake' } }, [problem('spec.deviceMode', '"fake"', 'lvm, direct, emulated')]],
    [{ ...valid, spec: 'x' }, [problem('spec', '"x"', 'an object')]],
  ])('%j', (obj, expected) => {
    expect(validateDeployment(obj)).toEqual(expected);
  });

  it('accepts a name of exactly 52 characters', () => {
    expect(validateDeployment({ metadata: { name: `a${'b'.repeat(51)}` } })).toEqual([]);
  });

  it('accepts names that only resemble a resizer Lease: no other driver resizes under their provisioner Lease', () => {
    for (const name of ['external-resizer', 'external-resizerx.example.com', 'my-external-resizer.example.com'])
      expect([name, validateDeployment({ metadata: { name } })]).toEqual([name, []]);
  });
});

describe('userCertificates', () => {
  it('returns the five PEM strings only when all are set', () => {
    expect(userCertificates(ALL_CERTS)).toEqual(ALL_CERTS);
    expect(userCertificates({ ...ALL_CERTS, caCert: '' })).toBeUndefined();
    expect(userCertificates({})).toBeUndefined();
    expect(userCertificates(undefined)).toBeUndefined();
  });
});
