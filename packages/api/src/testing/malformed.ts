// Generated malformed PmemCSIDeployment objects (issue 14, R4), for tests only: wrong types,
// out-of-range numbers, unknown fields, bad quantities, bad node selectors, bad certificates, bad
// names. Each object is bad on purpose in the field `why` names. Used by validate-fuzz.test.ts
// (in memory) and by the cluster tier (the apiserver's schema, then the operator's status).
import fc from 'fast-check';
import { MAX_CONTROLLER_REPLICAS } from '../crd/values.js';

/** Key material planted in bad key fields: no message may echo it. */
export const SECRET = 'U0VDUkVULUtFWS1GVVpaLURPLU5PVC1MT0c=';
const junk = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    true,
    -1,
    1.5,
    1e309 > 0 ? 1e308 : 0,
    '',
    '..',
    'a\u0000b',
    'x'.repeat(5000),
    '😀',
    [],
    {},
    [1, 'a'],
    { a: { b: {} } },
    -0,
    Number.MAX_SAFE_INTEGER + 2,
  ),
  fc.string({ unit: 'binary', maxLength: 100 }),
  fc.integer(),
  fc.double(),
);
// One field made bad on purpose per object, with a value the field cannot take.
const BAD_FIELDS: Readonly<Record<string, fc.Arbitrary<unknown>>> = {
  // null is 'unset' (as in a merge patch), so it is not among the bad values.
  deviceMode: fc.oneof(fc.constantFrom('LVM', 'pmem', '', 'fake ', 'direct\u0000'), fc.integer()),
  logLevel: fc.oneof(
    fc.integer({ min: -1000, max: -1 }),
    fc.integer({ min: 100_000 }),
    fc.constantFrom('3', 'debug'),
    fc.double({ noInteger: true, min: 0.1, max: 10 }),
  ),
  logFormat: fc.constantFrom('xml', '', 'JSON', 7),
  pmemPercentage: fc.oneof(fc.integer({ min: 101 }), fc.integer({ max: -1 }), fc.constantFrom('50', 50.5)),
  emulatedSize: fc.constantFrom('1', '1Ki', '63Mi', '2Ti', 'big', '-4Gi', '4Gb', '4 Gi', 4, ''),
  controllerReplicas: fc.oneof(
    fc.integer({ max: 0 }),
    fc.integer({ min: MAX_CONTROLLER_REPLICAS + 1 }),
    fc.constantFrom('2', 1.5),
  ),
  image: fc.constantFrom('UPPER/Case:tag', 'a b', '', 'img@sha256:zz', '::', 5),
  imagePullPolicy: fc.constantFrom('Sometimes', 'always', '', 1),
  nodeSelector: fc.oneof(
    fc.constantFrom<unknown>(
      'a=b',
      ['a'],
      { '': 'x' },
      { 'a b': 'x' },
      { a: 5 },
      { a: 'x'.repeat(64) },
      { ['k'.repeat(64)]: 'v' },
      { 'a/b/c': 'v' },
      { '-a': 'v' },
    ),
  ),
  labels: fc.constantFrom<unknown>({ 'bad key!': 'v' }, { a: '-v-' }, 'x', { a: null }),
  kubeletDir: fc.constantFrom('relative/dir', '', '/var/../etc', 'a\u0000b', 7),
  controllerDriverResources: fc.constantFrom<unknown>(
    { requests: { cpu: 'lots' } },
    { limits: { memory: '-1Gi' } },
    'x',
    { other: {} },
  ),
  maxUnavailable: fc.constantFrom<unknown>('150%', -1, '', 'x', '-5%', 1.5),
  caCert: fc.constantFrom('not a pem', '-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n', 5),
  registryKey: fc.constantFrom(
    `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${SECRET}\n-----END ENCRYPTED PRIVATE KEY-----\n`,
    `-----BEGIN PUBLIC KEY-----\n${SECRET}\n-----END PUBLIC KEY-----\n`,
    SECRET,
  ),
  unknownField: junk,
};

const malformed = fc
  .tuple(
    fc.constantFrom(...Object.keys(BAD_FIELDS)),
    fc.constant(null).chain(() => fc.oneof(...Object.values(BAD_FIELDS))),
    fc.dictionary(fc.constantFrom(...Object.keys(BAD_FIELDS).filter((k) => k !== 'unknownField')), junk, {
      maxKeys: 3,
    }),
  )
  .chain(([field, , extra]) => (BAD_FIELDS[field] as fc.Arbitrary<unknown>).map((value) => ({ field, value, extra })));

/** A malformed object and the field path it is bad in on purpose. */
export const malformedDeployment: fc.Arbitrary<{ why: string; obj: Record<string, unknown> }> = fc.oneof(
  // A bad field in spec (plus junk in others).
  malformed.map(({ field, value, extra }) => ({
    why: `spec.${field}`,
    obj: {
      apiVersion: 'pmem-csi.intel.com/v1beta1',
      kind: 'PmemCSIDeployment',
      metadata: { name: 'pmem-csi.intel.com' },
      spec: { ...extra, [field]: value },
    },
  })),
  // A bad name or a spec that is not an object.
  fc
    .tuple(
      fc.constantFrom<unknown>('', 'UPPER', 'a_b', 'x'.repeat(300), '..', 5, null),
      fc.constantFrom<unknown>({}, undefined),
    )
    .map(([name, spec]) => ({ why: 'metadata.name', obj: { metadata: { name }, spec } })),
  junk
    .filter((v) => v !== null && typeof v !== 'object')
    .map((spec) => ({ why: 'spec', obj: { metadata: { name: 'pmem-csi.intel.com' }, spec } })),
);
