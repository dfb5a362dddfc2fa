import {
  formatVolumeContext,
  isEphemeralVolumeContext,
  parseVolumeParameters,
  type ParameterResult,
  type VolumeParameterOrigin,
  type VolumeParameters,
} from './parameters.js';

const DEFAULTS: VolumeParameters = { eraseAfter: true, kataContainers: false, usage: 'AppDirect', passthrough: {} };
const GI = 1024 ** 3;

const ALLOWED: Record<VolumeParameterOrigin, string> = {
  createVolume: 'eraseafter, kataContainers, usage, persistencyModel, csi.storage.k8s.io/*',
  ephemeral: 'size, eraseafter, kataContainers, usage, csi.storage.k8s.io/*',
  volumeContext:
    'eraseafter, kataContainers, usage, persistencyModel, name, deviceMode, storage.kubernetes.io/csiProvisionerIdentity, csi.storage.k8s.io/*',
};
const WHERE: Record<VolumeParameterOrigin, string> = {
  createVolume: 'StorageClass parameters',
  ephemeral: 'ephemeral volume attributes',
  volumeContext: 'the volume context',
};
const notAllowed = (key: string, origin: VolumeParameterOrigin): string =>
  `parameter ${JSON.stringify(key)} is not allowed in ${WHERE[origin]}; allowed keys: ${ALLOWED[origin]}`;
const CACHE_SIZE =
  'parameter "cacheSize" is not supported: cache persistency was removed; omit it and use persistencyModel "normal" (or no persistencyModel)';
const SIZE_REQUIRED =
  'parameter "size" is required for ephemeral volumes (a Kubernetes quantity, e.g. 1Gi, 100Mi, 2G or 1073741824)';

function fail(origin: VolumeParameterOrigin, ...problems: [key: string, message: string][]): ParameterResult {
  return {
    ok: false,
    problems: problems.map(([key, message]) => ({ key, message })),
    message: `invalid ${WHERE[origin]}: ${problems.map(([, m]) => m).join('; ')}`,
  };
}

type Row = [origin: VolumeParameterOrigin, params: Record<string, string>, expected: Partial<VolumeParameters>];

describe('parseVolumeParameters accepts', () => {
  it.each<Row>([
    ['createVolume', {}, {}],
    ['createVolume', { eraseafter: 'false' }, { eraseAfter: false }],
    ['createVolume', { eraseafter: 'True', kataContainers: '1' }, { eraseAfter: true, kataContainers: true }],
    ['createVolume', { eraseafter: 'F', kataContainers: 'FALSE' }, { eraseAfter: false }],
    ['createVolume', { usage: 'FileIO' }, { usage: 'FileIO' }],
    ['createVolume', { usage: 'AppDirect' }, {}],
    ['createVolume', { persistencyModel: 'normal' }, {}],
    [
      'createVolume',
      { 'csi.storage.k8s.io/pvc/name': 'claim', 'csi.storage.k8s.io/pvc/namespace': 'default' },
      { passthrough: { 'csi.storage.k8s.io/pvc/name': 'claim', 'csi.storage.k8s.io/pvc/namespace': 'default' } },
    ],
    ['ephemeral', { size: '1Gi' }, { size: GI }],
    [
      'ephemeral',
      { size: '100Mi', eraseafter: 'false', kataContainers: 'true', usage: 'FileIO' },
      { size: 100 * 1024 ** 2, eraseAfter: false, kataContainers: true, usage: 'FileIO' },
    ],
    ['ephemeral', { size: '2G' }, { size: 2e9 }],
    ['ephemeral', { size: '1073741824' }, { size: GI }],
    ['ephemeral', { size: '1.5Gi' }, { size: 1.5 * GI }],
    [
      'ephemeral',
      { size: '1Gi', 'csi.storage.k8s.io/ephemeral': 'true', 'csi.storage.k8s.io/pod.name': 'p' },
      { size: GI, passthrough: { 'csi.storage.k8s.io/ephemeral': 'true', 'csi.storage.k8s.io/pod.name': 'p' } },
    ],
    [
      'volumeContext',
      { eraseafter: 'true', kataContainers: 'false', usage: 'AppDirect', name: 'pvc-1', deviceMode: 'lvm' },
      { name: 'pvc-1', deviceMode: 'lvm' },
    ],
    ['volumeContext', { deviceMode: 'direct' }, { deviceMode: 'direct' }],
    ['volumeContext', { deviceMode: 'emulated' }, { deviceMode: 'emulated' }],
    ['volumeContext', { deviceMode: 'fake' }, { deviceMode: 'fake' }],
    // What the Go driver put into PVs, plus what Kubernetes adds at publish time.
    [
      'volumeContext',
      {
        eraseafter: 'true',
        name: 'pvc-2',
        persistencyModel: 'normal',
        'storage.kubernetes.io/csiProvisionerIdentity': '1600000000000-8081-pmem-csi.intel.com',
        'csi.storage.k8s.io/ephemeral': 'false',
      },
      {
        name: 'pvc-2',
        passthrough: {
          'storage.kubernetes.io/csiProvisionerIdentity': '1600000000000-8081-pmem-csi.intel.com',
          'csi.storage.k8s.io/ephemeral': 'false',
        },
      },
    ],
  ])('%s %j', (origin, params, expected) => {
    expect(parseVolumeParameters(params, origin)).toEqual({ ok: true, value: { ...DEFAULTS, ...expected } });
  });
});

describe('parseVolumeParameters rejects', () => {
  type Bad = [origin: VolumeParameterOrigin, params: Record<string, string>, problems: [string, string][]];
  it.each<Bad>([
    ['createVolume', { foo: 'bar' }, [['foo', notAllowed('foo', 'createVolume')]]],
    ['createVolume', { size: '1Gi' }, [['size', notAllowed('size', 'createVolume')]]],
    ['createVolume', { name: 'x' }, [['name', notAllowed('name', 'createVolume')]]],
    ['createVolume', { deviceMode: 'lvm' }, [['deviceMode', notAllowed('deviceMode', 'createVolume')]]],
    ['createVolume', { EraseAfter: 'true' }, [['EraseAfter', notAllowed('EraseAfter', 'createVolume')]]],
    [
      'createVolume',
      { 'storage.kubernetes.io/csiProvisionerIdentity': 'x' },
      [
        [
          'storage.kubernetes.io/csiProvisionerIdentity',
          notAllowed('storage.kubernetes.io/csiProvisionerIdentity', 'createVolume'),
        ],
      ],
    ],
    [
      'createVolume',
      { eraseafter: 'yes' },
      [['eraseafter', 'parameter "eraseafter": "yes" is not a boolean; allowed values: true, false']],
    ],
    [
      'createVolume',
      { kataContainers: '' },
      [['kataContainers', 'parameter "kataContainers": "" is not a boolean; allowed values: true, false']],
    ],
    [
      'createVolume',
      { usage: 'appdirect' },
      [['usage', 'parameter "usage": "appdirect" is not supported; allowed values: AppDirect, FileIO']],
    ],
    [
      'createVolume',
      { persistencyModel: 'cache' },
      [
        [
          'persistencyModel',
          'parameter "persistencyModel": "cache" is not supported (cache volumes were removed); allowed values: normal',
        ],
      ],
    ],
    [
      'createVolume',
      { persistencyModel: 'none' },
      [['persistencyModel', 'parameter "persistencyModel": "none" is not supported; allowed values: normal']],
    ],
    ['createVolume', { cacheSize: '2' }, [['cacheSize', CACHE_SIZE]]],
    [
      'createVolume',
      { persistencyModel: 'cache', cacheSize: '2', eraseafter: 'nope' },
      [
        ['cacheSize', CACHE_SIZE],
        ['eraseafter', 'parameter "eraseafter": "nope" is not a boolean; allowed values: true, false'],
        [
          'persistencyModel',
          'parameter "persistencyModel": "cache" is not supported (cache volumes were removed); allowed values: normal',
        ],
      ],
    ],
    ['ephemeral', {}, [['size', SIZE_REQUIRED]]],
    ['ephemeral', { 'csi.storage.k8s.io/ephemeral': 'true' }, [['size', SIZE_REQUIRED]]],
    ['ephemeral', { size: '0' }, [['size', 'parameter "size": "0" must be greater than 0 bytes']]],
    [
      'ephemeral',
      { size: 'big' },
      [
        [
          'size',
          'parameter "size": quantity "big" is not valid: expected a number with an optional suffix Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E or an exponent (e.g. 1Gi, 100Mi, 2G, 1.5Gi or 1073741824)',
        ],
      ],
    ],
    [
      'ephemeral',
      { size: '100m' },
      [
        [
          'size',
          'parameter "size": quantity "100m" uses the suffix "m" (10^-3), which cannot express bytes; use M (10^6) or Mi (2^20)',
        ],
      ],
    ],
    [
      'ephemeral',
      { size: '-1Gi' },
      [['size', 'parameter "size": quantity "-1Gi" is negative; a size in bytes must not be negative']],
    ],
    [
      'ephemeral',
      { size: '1Gi', persistencyModel: 'normal' },
      [['persistencyModel', notAllowed('persistencyModel', 'ephemeral')]],
    ],
    ['ephemeral', { size: '1Gi', name: 'n' }, [['name', notAllowed('name', 'ephemeral')]]],
    ['ephemeral', { size: '1Gi', cacheSize: '1' }, [['cacheSize', CACHE_SIZE]]],
    ['volumeContext', { size: '1Gi' }, [['size', notAllowed('size', 'volumeContext')]]],
    [
      'volumeContext',
      { deviceMode: 'ndctl' },
      [['deviceMode', 'parameter "deviceMode": "ndctl" is not supported; allowed values: lvm, direct, emulated, fake']],
    ],
    ['volumeContext', { name: '' }, [['name', 'parameter "name": must not be empty']]],
    ['volumeContext', { cacheSize: '2' }, [['cacheSize', CACHE_SIZE]]],
    [
      'volumeContext',
      { [`x${'y'.repeat(100)}`]: '1' },
      [[`x${'y'.repeat(100)}`, notAllowed(`x${'y'.repeat(60)}...`, 'volumeContext')]],
    ],
  ])('%s %j', (origin, params, problems) => {
    expect(parseVolumeParameters(params, origin)).toEqual(fail(origin, ...problems));
  });
});

describe('formatVolumeContext', () => {
  it.each<VolumeParameters>([
    DEFAULTS,
    { ...DEFAULTS, eraseAfter: false, kataContainers: true, usage: 'FileIO', name: 'pvc-1', deviceMode: 'direct' },
    { ...DEFAULTS, name: 'pvc-2', deviceMode: 'emulated' },
  ])('round-trips %j through the volumeContext parser', (params) => {
    expect(parseVolumeParameters(formatVolumeContext(params), 'volumeContext')).toEqual({ ok: true, value: params });
  });

  it('writes the keys the Go driver wrote, and neither size nor pass-through keys', () => {
    const created = parseVolumeParameters({ eraseafter: 'false', 'csi.storage.k8s.io/pvc/name': 'c' }, 'createVolume');
    if (!created.ok) throw new Error(created.message);
    expect(formatVolumeContext({ ...created.value, name: 'pvc-9', deviceMode: 'lvm', size: 5 })).toEqual({
      eraseafter: 'false',
      kataContainers: 'false',
      usage: 'AppDirect',
      name: 'pvc-9',
      deviceMode: 'lvm',
    });
  });
});

describe('isEphemeralVolumeContext', () => {
  it.each<[Record<string, string>, boolean]>([
    [{ 'csi.storage.k8s.io/ephemeral': 'true' }, true],
    [{ 'csi.storage.k8s.io/ephemeral': 'false' }, false],
    [{}, false],
  ])('%j -> %p', (context, ephemeral) => {
    expect(isEphemeralVolumeContext(context)).toBe(ephemeral);
  });
});
