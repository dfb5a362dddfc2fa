// One source of truth: the operator's builders, the kustomize bases and the Helm chart agree on
// every field that matters. Compared after removing only what must differ by install path
// (managed-by / helm.sh/chart labels, Helm's keep annotation, owner references and operator
// annotations that only an operator-built object has):
// - CRD: deploy/crd == Helm crds/ == kustomize crd base == pmemCsiDeploymentCrd;
// - operator: `helm template` (default values) == `kustomize build deploy/kustomize/operator` ==
//   operatorInstallObjects() (kinds, names, namespaces, images, args, ports, probes, RBAC rules);
// - driver, per variant: `kustomize build` == the committed deploy/kubernetes file == what the
//   operator builds for the PmemCSIDeployment that `helm template` renders from the same spec, with
//   the namespace and default image the chart passes to the operator. That those arguments are
//   what pmem-csi-driver accepts is a unit test of the operator (objects/driver-args.test.ts:
//   both render and parse through the flag schema of @pmem-csi/csi).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { API_GROUP_VERSION, KIND, LABEL_KEYS, deploymentObjectNames, pmemCsiDeploymentCrd, validateDeployment, withDefaults, type PmemCSIDeployment } from '@pmem-csi/api';
import {
  DEFAULT_OPERATOR_INSTALL,
  DRIVER_VARIANTS,
  KUSTOMIZE_BASES,
  OPERATOR_VERSION,
  buildDesiredObjects,
  namespaceObject,
  operatorInstallObjects,
  parseOperatorFlags,
  toStandalone,
  type KubeObject,
  type OwnerDeployment,
} from '@pmem-csi/operator';
import { CHART, REPO_ROOT, byIdentity, helmTemplate, identity, kustomizeBuild, parseManifests } from './render.js';

type Loose = KubeObject & Record<string, unknown>;
interface Container {
  name: string;
  image: string;
  args: string[];
}
const containersOf = (o: KubeObject | undefined): Container[] => (o as unknown as { spec: { template: { spec: { containers: Container[] } } } } | undefined)?.spec.template.spec.containers ?? [];
const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Without the labels and annotations that say which tool installed an object. */
function installNeutral(o: KubeObject): KubeObject {
  const copy = json(o);
  const labels = copy.metadata.labels;
  if (labels !== undefined) {
    delete labels[LABEL_KEYS.managedBy];
    delete labels['helm.sh/chart'];
  }
  const annotations = copy.metadata.annotations;
  if (annotations !== undefined) {
    delete annotations['helm.sh/resource-policy'];
    if (Object.keys(annotations).length === 0) delete copy.metadata.annotations;
  }
  return copy;
}

const without = (objects: readonly KubeObject[], ...kinds: string[]): KubeObject[] => objects.filter((o) => !kinds.includes(o.kind));
const argValue = (args: readonly string[], flag: string): string | undefined => args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);

describe('CRD', () => {
  it('is the same in deploy/crd, the Helm chart, the kustomize base and @pmem-csi/api', () => {
    const source = parseManifests(readFileSync(join(REPO_ROOT, 'deploy/crd/pmem-csi.intel.com_pmemcsideployments.yaml'), 'utf8'));
    const helm = parseManifests(helmTemplate({ includeCrds: true })).filter((o) => o.kind === 'CustomResourceDefinition');
    const kustomize = parseManifests(kustomizeBuild(KUSTOMIZE_BASES.crd));
    expect(source).toEqual([json(pmemCsiDeploymentCrd)]);
    expect(helm).toEqual(source);
    expect(kustomize).toEqual(source);
  });

  it('reads the same as YAML 1.1, the way the API server and kubectl read it (no unquoted off, on, yes, no)', () => {
    // An enum value or default that YAML 1.1 takes for a boolean (spec.cxlRegions "off" once) makes the
    // CRD invalid on a real API server ("must be of type string"), and users' CRs with it wrong.
    const text = readFileSync(join(REPO_ROOT, 'deploy/crd/pmem-csi.intel.com_pmemcsideployments.yaml'), 'utf8');
    expect(parse(text, { version: '1.1' })).toEqual(parse(text));
    expect(parse(text, { version: '1.1' })).toEqual(json(pmemCsiDeploymentCrd));
  });
});

describe('operator', () => {
  const helm = parseManifests(helmTemplate());
  const kustomize = parseManifests(kustomizeBuild(KUSTOMIZE_BASES.operator));
  const built = operatorInstallObjects(DEFAULT_OPERATOR_INSTALL);

  it('consists of the same objects in Helm, kustomize and the render module', () => {
    const ids = (list: readonly KubeObject[]): string[] => byIdentity(without(list, 'Namespace')).map(identity);
    expect(ids(helm)).toEqual(ids(built));
    expect(ids(kustomize)).toEqual(ids(built));
  });

  it('has every field equal across the three (images, args, ports, probes, security, RBAC rules)', () => {
    const neutral = (list: readonly KubeObject[]): KubeObject[] => byIdentity(without(list, 'Namespace')).map(installNeutral);
    expect(neutral(helm)).toEqual(neutral(built));
    expect(neutral(kustomize)).toEqual(neutral(built));
  });

  it('runs with arguments the operator binary accepts', () => {
    for (const list of [helm, kustomize]) {
      const [container] = containersOf(list.find((o) => o.kind === 'Deployment'));
      const config = parseOperatorFlags(container?.args ?? [], {});
      expect(config).toMatchObject({ namespace: DEFAULT_OPERATOR_INSTALL.driverNamespace, leaderElect: true, driverImage: DEFAULT_OPERATOR_INSTALL.driverImage });
    }
  });

  it('leaves the drivers\' namespace to a separate object: privileged, and kept by Helm', () => {
    const expected = installNeutral(namespaceObject(DEFAULT_OPERATOR_INSTALL.driverNamespace, 'privileged', 'x'));
    const fromHelm = helm.filter((o) => o.kind === 'Namespace');
    // Helm labels every object of the chart with the app version, the namespace included.
    const withVersion = { ...expected, metadata: { ...expected.metadata, labels: { ...expected.metadata.labels, 'app.kubernetes.io/version': OPERATOR_VERSION } } };
    expect(fromHelm.map(installNeutral)).toEqual([withVersion]);
    expect(fromHelm[0]?.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    expect(parseManifests(kustomizeBuild(KUSTOMIZE_BASES.driverNamespace)).map(installNeutral)).toEqual([expected]);
    expect(kustomize.filter((o) => o.kind === 'Namespace').map((n) => n.metadata.name)).toEqual([DEFAULT_OPERATOR_INSTALL.operatorNamespace]);
  });
});

describe('driver', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'pmem-csi-agreement-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  for (const variant of DRIVER_VARIANTS) {
    describe(variant.id, () => {
      const kustomize = parseManifests(kustomizeBuild(variant.kustomizeDir));

      it(`kustomize build ${variant.kustomizeDir} is the committed ${variant.renderedFile}`, () => {
        const committed = parseManifests(readFileSync(join(REPO_ROOT, variant.renderedFile), 'utf8'));
        expect(byIdentity(kustomize)).toEqual(byIdentity(committed));
      });

      it('is what the operator builds for the PmemCSIDeployment the Helm chart renders from the same spec', () => {
        const valuesFile = join(tmp, `${variant.id}.yaml`);
        writeFileSync(valuesFile, stringify({ deployment: { create: true, spec: variant.spec } }));
        const helm = parseManifests(helmTemplate({ valuesFiles: [valuesFile] }));
        const cr = helm.find((o) => o.kind === KIND) as unknown as PmemCSIDeployment & { metadata: { name: string } };
        expect(cr).toMatchObject({ apiVersion: API_GROUP_VERSION, spec: variant.spec });
        expect(validateDeployment(cr)).toEqual([]);
        const args = containersOf(helm.find((o) => o.kind === 'Deployment'))[0]?.args ?? [];
        const namespace = argValue(args, '--namespace') ?? '';
        const operatorImage = argValue(args, '--driver-image') ?? '';
        const owner: OwnerDeployment = { ...cr, metadata: { ...cr.metadata, name: cr.metadata.name, uid: '00000000-0000-4000-8000-000000000000' } };
        const none = { caBundlePem: '', certPem: '', keyPem: '' };
        const ctx = { namespace, operatorVersion: OPERATOR_VERSION, spec: withDefaults(cr.spec, { operatorImage }), certs: { registry: none, node: none } };
        const operatorBuilt = buildDesiredObjects(owner, ctx).map((d) => d.object);
        const names = deploymentObjectNames(cr.metadata.name);
        expect(operatorBuilt.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name).sort()).toEqual([names.nodeSecret, names.registrySecret]);
        expect(byIdentity(operatorBuilt.filter((o) => o.kind !== 'Secret').map((o) => toStandalone(o)))).toEqual(byIdentity(without(kustomize, 'Namespace')));
        expect(kustomize.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name)).toEqual([namespace]);
      });

    });
  }
});

describe('chart', () => {
  it(`${CHART} passes its driver image and namespace to the operator, which the driver bases use`, () => {
    const helm = parseManifests(helmTemplate());
    const args = containersOf(helm.find((o) => o.kind === 'Deployment'))[0]?.args ?? [];
    for (const variant of DRIVER_VARIANTS) {
      const objects = parseManifests(readFileSync(join(REPO_ROOT, variant.renderedFile), 'utf8')) as Loose[];
      const drivers = [...containersOf(objects.find((o) => o.kind === 'Deployment')), ...containersOf(objects.find((o) => o.kind === 'DaemonSet'))].filter((c) => c.name === 'pmem-driver');
      expect(drivers.map((c) => c.image)).toEqual([argValue(args, '--driver-image'), argValue(args, '--driver-image')]);
      expect(objects.filter((o) => o.metadata.namespace !== undefined).map((o) => o.metadata.namespace)).toEqual(
        objects.filter((o) => o.metadata.namespace !== undefined).map(() => argValue(args, '--namespace')),
      );
    }
  });
});
