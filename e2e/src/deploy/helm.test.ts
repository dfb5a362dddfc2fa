// The Helm chart with the real helm binary: lint and template over several values files, the
// values schema refusing bad input, what uninstall keeps, and the NOTES shown after install.
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCa, createLeaf, NODE_CONTROLLER_IDENTITY, REGISTRY_IDENTITY } from '@pmem-csi/runtime';
import { KIND, validateDeployment } from '@pmem-csi/api';
import type { KubeObject } from '@pmem-csi/operator';
import { CHART, HELM_CI_VALUES, REPO_ROOT, RELEASE_NAMESPACE, ToolFailedError, helmLint, helmTemplate, parseManifests, type HelmOptions } from './render.js';

type Loose = KubeObject & Record<string, unknown>;
const find = (objects: readonly KubeObject[], kind: string, name?: string): Loose | undefined =>
  objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name)) as Loose | undefined;
const operatorContainer = (objects: readonly KubeObject[]): { image: string; imagePullPolicy: string; args: string[] } =>
  (find(objects, 'Deployment') as unknown as { spec: { template: { spec: { containers: { image: string; imagePullPolicy: string; args: string[] }[] } } } }).spec.template.spec.containers[0] ?? {
    image: '',
    imagePullPolicy: '',
    args: [],
  };

const tmp = mkdtempSync(join(tmpdir(), 'pmem-csi-helm-'));
const CERT_FIELDS = ['caCert', 'registryCert', 'registryKey', 'nodeControllerCert', 'nodeControllerKey'] as const;
const certFiles: Record<string, string> = {};

beforeAll(async () => {
  const ca = await createCa({ commonName: 'helm test CA', validityDays: 2, keyBits: 2048 });
  const registry = await createLeaf({ ca, dnsName: REGISTRY_IDENTITY, validityDays: 1, keyBits: 2048 });
  const node = await createLeaf({ ca, dnsName: NODE_CONTROLLER_IDENTITY, validityDays: 1, keyBits: 2048 });
  const pems = { caCert: ca.certPem, registryCert: registry.certPem, registryKey: registry.keyPem, nodeControllerCert: node.certPem, nodeControllerKey: node.keyPem };
  for (const field of CERT_FIELDS) {
    certFiles[`deployment.spec.${field}`] = join(tmp, `${field}.pem`);
    writeFileSync(join(tmp, `${field}.pem`), pems[field]);
  }
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The values sets every check runs over: defaults, lvm, and direct with custom images and user certificates. */
const VALUE_SETS: { readonly name: string; readonly options: () => HelmOptions }[] = [
  { name: 'default values', options: () => ({}) },
  { name: 'ci/lvm-values.yaml', options: () => ({ valuesFiles: [HELM_CI_VALUES[0]] }) },
  { name: 'ci/direct-custom-values.yaml + certificates', options: () => ({ valuesFiles: [HELM_CI_VALUES[1]], setFile: certFiles }) },
];

describe('helm lint --strict', () => {
  for (const set of VALUE_SETS) {
    it(`passes with ${set.name}`, () => {
      expect(helmLint(set.options())).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    });
  }
});

describe('helm template', () => {
  it('with default values: the operator, the kept driver namespace, and no PmemCSIDeployment', () => {
    const objects = parseManifests(helmTemplate());
    expect(objects.map((o) => o.kind).sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'Deployment', 'Namespace', 'Role', 'RoleBinding', 'ServiceAccount']);
    expect(find(objects, 'Namespace')?.metadata).toMatchObject({ name: 'pmem-csi', annotations: { 'helm.sh/resource-policy': 'keep' } });
    expect(operatorContainer(objects)).toMatchObject({ image: 'pmem-csi-operator:0.1.0', imagePullPolicy: 'IfNotPresent' });
    expect(operatorContainer(objects).args).toEqual(expect.arrayContaining(['--namespace=pmem-csi', '--leader-elect', '--driver-image=pmem-csi-driver:0.1.0']));
    expect(find(objects, 'Deployment')?.metadata.namespace).toBe(RELEASE_NAMESPACE);
    expect(find(objects, 'Role')?.metadata.namespace).toBe('pmem-csi');
  });

  it('with ci/lvm-values.yaml: the PmemCSIDeployment of the values, kept on uninstall', () => {
    const cr = find(parseManifests(helmTemplate({ valuesFiles: [HELM_CI_VALUES[0]] })), KIND);
    expect(cr?.metadata).toMatchObject({ name: 'pmem-csi.intel.com', annotations: { 'helm.sh/resource-policy': 'keep' } });
    expect(cr?.['spec']).toEqual({ deviceMode: 'lvm', pmemPercentage: 50, nodeSelector: { storage: 'pmem' }, logFormat: 'json' });
    expect(validateDeployment(cr)).toEqual([]);
  });

  it('with ci/direct-custom-values.yaml and certificates: registry, images, namespace, certificates, deleted on uninstall', () => {
    const objects = parseManifests(helmTemplate({ valuesFiles: [HELM_CI_VALUES[1]], setFile: certFiles }));
    const cr = find(objects, KIND);
    expect(cr?.metadata.name).toBe('pmem.example.com');
    expect(cr?.metadata.annotations).toBeUndefined();
    const spec = cr?.['spec'] as Record<string, unknown>;
    expect(spec).toMatchObject({ deviceMode: 'direct', image: 'registry.example.com/pmem/pmem-csi-driver:0.1.0-pinned', resizerImage: 'registry.example.com/sig-storage/csi-resizer:v2.3.0', controllerReplicas: 1, labels: { team: 'storage' } });
    for (const field of CERT_FIELDS) expect(spec[field]).toBe(readFileSync(certFiles[`deployment.spec.${field}`] ?? '', 'utf8'));
    expect(validateDeployment(cr)).toEqual([]);
    expect(operatorContainer(objects)).toMatchObject({ image: 'registry.example.com/pmem/pmem-csi-operator:0.1.0-rc1', imagePullPolicy: 'Always' });
    expect(operatorContainer(objects).args).toEqual(
      expect.arrayContaining(['--namespace=pmem-storage', '--driver-image=registry.example.com/pmem/pmem-csi-driver:0.1.0-rc1', '--log-format=json', '--log-level=debug']),
    );
    expect(find(objects, 'Namespace')?.metadata.name).toBe('pmem-storage');
    expect([find(objects, 'Role')?.metadata.namespace, find(objects, 'RoleBinding')?.metadata.namespace]).toEqual(['pmem-storage', 'pmem-storage']);
    const pod = (find(objects, 'Deployment') as unknown as { spec: { replicas: number; template: { spec: Record<string, unknown> } } }).spec;
    expect(pod.replicas).toBe(2);
    expect(pod.template.spec).toMatchObject({ imagePullSecrets: [{ name: 'registry-example-com' }], tolerations: [expect.objectContaining({ key: 'node-role.kubernetes.io/control-plane' })] });
  });

  it('creates no driver namespace when told not to, or when it is the release namespace', () => {
    expect(parseManifests(helmTemplate({ set: { 'driver.createNamespace': 'false' } })).map((o) => o.kind)).not.toContain('Namespace');
    const shared = parseManifests(helmTemplate({ set: { 'driver.namespace': RELEASE_NAMESPACE } }));
    expect(shared.map((o) => o.kind)).not.toContain('Namespace');
    expect(find(shared, 'Role')?.metadata.namespace).toBe(RELEASE_NAMESPACE);
  });

  it('includes the CRD only from crds/ (never deleted or upgraded by Helm)', () => {
    expect(parseManifests(helmTemplate()).map((o) => o.kind)).not.toContain('CustomResourceDefinition');
    expect(parseManifests(helmTemplate({ includeCrds: true })).map((o) => o.kind)).toContain('CustomResourceDefinition');
  });

  it('passes optional pod settings through', () => {
    const objects = parseManifests(helmTemplate({ set: { 'operator.priorityClassName': 'high', 'operator.podAnnotations.a': 'b', 'operator.resources.limits.memory': '1Gi' } }));
    const template = (find(objects, 'Deployment') as unknown as { spec: { template: { metadata: { annotations: unknown }; spec: { priorityClassName: string; containers: { resources: unknown }[] } } } }).spec.template;
    expect(template.metadata.annotations).toEqual({ a: 'b' });
    expect(template.spec.priorityClassName).toBe('high');
    expect(template.spec.containers[0]?.resources).toEqual({ requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '1Gi' } });
  });
});

describe('values.schema.json', () => {
  const refusal = (set: Record<string, string>): string => {
    try {
      helmTemplate({ set });
    } catch (e) {
      if (e instanceof ToolFailedError) return e.stderr;
      throw e;
    }
    throw new Error(`helm accepted ${JSON.stringify(set)}`);
  };

  it('refuses a device mode the CRD does not allow, naming the allowed ones', () => {
    expect(refusal({ 'deployment.spec.deviceMode': 'fake' })).toMatch(/deployment\/spec\/deviceMode.*'lvm', 'direct'/);
  });

  it('refuses unknown keys (typos) in the operator values and the spec', () => {
    expect(refusal({ 'operator.replica': '2' })).toMatch(/additional properties 'replica' not allowed/);
    expect(refusal({ 'deployment.spec.devicemode': 'lvm' })).toMatch(/additional properties 'devicemode' not allowed/);
  });

  it('refuses out-of-range numbers and bad names', () => {
    expect(refusal({ 'deployment.spec.pmemPercentage': '101' })).toMatch(/pmemPercentage/);
    expect(refusal({ 'deployment.name': 'Not_A_Driver_Name' })).toMatch(/deployment\/name/);
    expect(refusal({ 'driver.namespace': 'Bad_Namespace' })).toMatch(/driver\/namespace/);
    expect(refusal({ 'operator.logLevel': 'verbose' })).toMatch(/operator\/logLevel/);
  });
});

describe('NOTES.txt', () => {
  // `helm install --dry-run` needs a reachable cluster with this helm build, and `helm template`
  // does not print NOTES: render them as a ConfigMap from a copy of the chart.
  const notes = (set: Record<string, string>): string => {
    const chart = join(tmp, `chart-${Object.keys(set).join('-') || 'default'}-${Object.values(set).join('-')}`);
    cpSync(join(REPO_ROOT, CHART), chart, { recursive: true });
    const text = readFileSync(join(chart, 'templates/NOTES.txt'), 'utf8');
    rmSync(join(chart, 'templates/NOTES.txt'));
    writeFileSync(join(chart, 'templates/_notes-under-test.tpl'), `{{- define "test.notes" -}}\n${text}{{- end }}\n`);
    writeFileSync(join(chart, 'templates/notes-under-test.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: {{ include "test.notes" . | toJson }}\n');
    renameSync(join(chart, 'ci'), join(chart, 'ci-unused'));
    const cm = find(parseManifests(helmTemplate({ chart, set })), 'ConfigMap', 'notes') as unknown as { data: { notes: string } };
    return cm.data.notes;
  };

  it('tells how to create a PmemCSIDeployment and watch it when the chart made none', () => {
    const text = notes({});
    expect(text).toContain('kubectl get pcd -w');
    expect(text).toContain('kubectl describe pcd pmem-csi.intel.com');
    expect(text).toContain('kind: PmemCSIDeployment');
    expect(text).toContain('kubectl apply -f pcd.yaml');
  });

  it('tells how to watch the created PmemCSIDeployment and that uninstall keeps it', () => {
    const text = notes({ 'deployment.create': 'true', 'deployment.name': 'pmem.example.com' });
    expect(text).toContain('kubectl get pcd pmem.example.com -w');
    expect(text).toContain('kubectl describe pcd pmem.example.com');
    expect(text).toContain('keeps this PmemCSIDeployment');
  });

  it('warns when uninstall deletes the driver, and when drivers share the operator namespace', () => {
    expect(notes({ 'deployment.create': 'true', 'deployment.deleteOnUninstall': 'true' })).toContain('DELETES this driver');
    expect(notes({ 'driver.namespace': RELEASE_NAMESPACE })).toContain('WARNING: the drivers share the operator\'s namespace');
  });
});
