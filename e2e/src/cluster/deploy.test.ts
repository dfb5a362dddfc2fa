// Cluster tier, install paths: the Helm chart installed for real (CRD, operator objects, a
// PmemCSIDeployment), the operator then run exactly as the chart deploys it (its args, its
// ServiceAccount's token, so the chart's RBAC is what is tested) until the driver is Running, and
// `helm uninstall` leaving the driver alone. Then every rendered deploy/ output (CRD, helm template
// with each values file, deploy/kubernetes/*/*.yaml, kustomize builds) passes a server-side
// dry-run apply against the real apiserver (schema, defaulting, admission).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DRIVER_NAMESPACE,
  REPO_ROOT,
  serviceAccountKubeconfig,
  startOperator,
  type OperatorRun,
} from './components.js';
import { clusterHelm, createCluster, printTimings, ensureNamespace, type KwokCluster } from './harness.js';
import { readYamlObjects, type KubeObject } from './kube.js';
import { tail } from './processes.js';
import {
  conditionIs,
  crRef,
  existing,
  expectedObjects,
  installCrd,
  waitStatus,
  type PmemDeployment,
} from './pmem-deployment.js';
import { WaitAborted } from './wait.js';
import { renderAllOutputs } from '../deploy/render.js';
import { CRD_NAME } from '@pmem-csi/api';

/** The chart under test; PMEM_CSI_E2E_CHART points at another copy (e.g. to try a fix). */
const CHART = process.env['PMEM_CSI_E2E_CHART'] ?? join(REPO_ROOT, 'deploy/helm/pmem-csi');
const RELEASE = 'pmem-csi';
const OPERATOR_NAMESPACE = 'pmem-csi-operator';
const CR = 'pmem-csi.intel.com';
const timings: Record<string, number> = {};

/**
 * Every rendered install manifest (e2e/src/deploy/render.ts: committed files, kustomize builds,
 * helm template with each values file), rendered once when the suite is collected, plus the CRD.
 * A rendering failure becomes one failing test instead of a missing suite.
 */
function outputs(): { readonly id: string; readonly yaml: string }[] {
  const crd = { id: `file ${CRD_FILE}`, yaml: readFileSync(join(REPO_ROOT, CRD_FILE), 'utf8') };
  try {
    return [crd, ...renderAllOutputs()];
  } catch (e) {
    return [crd, { id: `rendering failed: ${(e as Error).message.split('\n')[0] ?? ''}`, yaml: '' }];
  }
}
const CRD_FILE = 'deploy/crd/pmem-csi.intel.com_pmemcsideployments.yaml';
const OUTPUTS = outputs();

interface Workload extends KubeObject {
  spec: { template: { spec: { serviceAccountName?: string; containers: Array<{ name: string; args?: string[] }> } } };
  status?: { readyReplicas?: number };
}

describe('cluster: install paths', () => {
  let cluster: KwokCluster;
  let operator: OperatorRun | undefined;
  const helm = (args: readonly string[], timeoutMs = 180_000): Promise<string> => clusterHelm(cluster)(args, timeoutMs);
  /**
   * Dry-run `docs` (the file, or stdin). A dry run creates nothing, so the namespaces the objects go
   * to are created for real first (as an earlier `kubectl create namespace` or the Namespace object
   * in the same output would have).
   */
  const dryRun = async (docs: readonly KubeObject[], args: readonly string[], input?: string): Promise<string> => {
    for (const ns of new Set(docs.flatMap((o) => (o.metadata.namespace === undefined ? [] : [o.metadata.namespace]))))
      await ensureNamespace(cluster.kube, ns);
    return cluster.kubectl(
      [
        'apply',
        '--server-side',
        '--dry-run=server',
        '--force-conflicts',
        '--field-manager=pmem-csi-e2e-dry-run',
        ...args,
      ],
      input === undefined ? {} : { input },
    );
  };

  beforeAll(async () => {
    cluster = await createCluster({ suite: 'deploy' });
    timings['cluster create (kwokctl until API)'] = cluster.timings.createMs;
    timings['cluster ready (nodes Ready)'] = cluster.timings.nodesReadyMs;
  }, 300_000);

  afterAll(async () => {
    await operator?.stop().catch(() => undefined);
    await cluster?.delete();
    printTimings('install paths', timings);
  }, 120_000);

  describe('Helm chart', () => {
    it('installs the CRD, the operator and a PmemCSIDeployment (helm install --wait)', async () => {
      if (!existsSync(join(CHART, 'Chart.yaml'))) throw new Error(`no chart at ${CHART}`);
      const started = Date.now();
      await helm([
        'install',
        RELEASE,
        CHART,
        '--namespace',
        OPERATOR_NAMESPACE,
        '--create-namespace',
        '--set',
        'deployment.create=true',
        '--wait',
        '--timeout',
        '150s',
      ]);
      const { kube } = cluster;
      expect(
        await kube.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: CRD_NAME }),
      ).toBeDefined();
      const deployment = await kube.must<Workload>({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'pmem-csi-operator',
        namespace: OPERATOR_NAMESPACE,
      });
      expect(deployment.status?.readyReplicas).toBe(1); // simulated by kwok: the pod runs no code
      const ns = await kube.must({ apiVersion: 'v1', kind: 'Namespace', name: DRIVER_NAMESPACE });
      expect(ns.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
      const cr = await kube.must(crRef(CR));
      expect(cr.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
      timings['helm install --wait'] = Date.now() - started;
    }, 240_000);

    it('runs the operator as the chart deploys it (args, ServiceAccount RBAC) until the driver is Running', async () => {
      const started = Date.now();
      const { kube } = cluster;
      const deployment = await kube.must<Workload>({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'pmem-csi-operator',
        namespace: OPERATOR_NAMESPACE,
      });
      const container = deployment.spec.template.spec.containers[0];
      const args = container?.args ?? [];
      const flag = (name: string): string | undefined =>
        args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
      expect(flag('namespace')).toBe(DRIVER_NAMESPACE);
      expect(args).toContain('--leader-elect');
      const sa = deployment.spec.template.spec.serviceAccountName ?? 'default';
      const kubeconfig = await serviceAccountKubeconfig(cluster, kube, OPERATOR_NAMESPACE, sa);
      const [pod] = await kube.list('v1', 'Pod', {
        namespace: OPERATOR_NAMESPACE,
        labelSelector: 'app.kubernetes.io/name=pmem-csi-operator',
      });
      // Our runner supplies --kubeconfig, --namespace, --version, --driver-image and --metrics-address;
      // the chart's values for them must agree with what we pass.
      operator = await startOperator(cluster, {
        version: '0.1.0',
        driverImage: flag('driver-image') ?? '',
        kubeconfig,
        logName: 'operator-helm.log',
        extraArgs: args.filter((a) => !/^--(namespace|driver-image|metrics-address|version|kubeconfig)=/.test(a)),
        env: { POD_NAME: pod?.metadata.name ?? 'pmem-csi-operator-0', POD_NAMESPACE: OPERATOR_NAMESPACE },
      });
      const ok = (c: PmemDeployment): boolean => {
        // A denied request is not transient: the chart's RBAC lacks a permission.
        if (c.status?.phase === 'Failed' && /forbidden/i.test(c.status.reason ?? ''))
          throw new WaitAborted(`the operator is denied with the chart's RBAC: ${c.status.reason ?? ''}`);
        return c.status?.phase === 'Running';
      };
      const cr = await waitStatus(kube, CR, {
        what: 'phase Running with the chart RBAC',
        ok,
        timeoutMs: 150_000,
      }).catch((e: unknown) => {
        throw new Error(`${(e as Error).message}\noperator log:\n${tail(operator?.process.log() ?? '', 20)}`);
      });
      expect(conditionIs(cr, 'DriverDeployed', 'True')).toBe(true);
      expect((await existing(kube, expectedObjects(CR))).size).toBe(expectedObjects(CR).length);
      // Leader election through the chart's Role in the driver namespace.
      const lease = await kube.get({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        name: 'pmem-csi-operator',
        namespace: DRIVER_NAMESPACE,
      });
      expect(lease).toBeDefined();
      timings['operator (chart RBAC) to Running'] = Date.now() - started;
    }, 240_000);

    it('helm uninstall removes the operator and leaves the driver running', async () => {
      const started = Date.now();
      const { kube } = cluster;
      await operator?.stop();
      operator = undefined;
      await helm(['uninstall', RELEASE, '--namespace', OPERATOR_NAMESPACE, '--wait', '--timeout', '120s']);
      expect(
        await kube.get({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: 'pmem-csi-operator',
          namespace: OPERATOR_NAMESPACE,
        }),
      ).toBeUndefined();
      expect(
        await kube.get({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'pmem-csi-operator' }),
      ).toBeUndefined();
      expect(await kube.get(crRef(CR))).toBeDefined();
      expect((await existing(kube, expectedObjects(CR))).size).toBe(expectedObjects(CR).length);
      expect(await kube.get({ apiVersion: 'v1', kind: 'Namespace', name: DRIVER_NAMESPACE })).toBeDefined();
      timings['helm uninstall'] = Date.now() - started;
    }, 180_000);
  });

  describe('server-side dry-run apply of every rendered output', () => {
    // PmemCSIDeployments in the outputs need the CRD (normally there from the chart already).
    beforeAll(() => installCrd(cluster.kube), 60_000);

    it.each(OUTPUTS.map((o) => [o.id, o.yaml] as const))(
      '%s',
      async (id, yaml) => {
        if (id.startsWith('rendering failed')) throw new Error(id);
        const docs = readYamlObjects(yaml, true);
        expect(docs.length).toBeGreaterThan(0);
        const out = await dryRun(docs, ['-f', '-'], yaml);
        expect(
          out
            .trim()
            .split('\n')
            .filter((l) => /\(server dry run\)$/.test(l)),
        ).toHaveLength(docs.length);
      },
      60_000,
    );
  });
});
