// The reconciler with a highly available controller (issue 17): scaling between one and several
// replicas (strategy, disruption budget, no controller restart), and the registry Service of an
// older operator turned headless.
import { jest } from '@jest/globals';
import type { V1Deployment, V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import { CONFIG_HASH_ANNOTATION, getCondition, type DriverComponentStatus } from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import type { ObjectBuilder } from '../objects/context.js';
import { BUILDERS } from '../objects/registry.js';
import { TEST_NAMESPACE } from '../testing/fixtures.js';
import { CR_NAME, NAMES, harness, type Harness } from '../testing/harness.js';

jest.setTimeout(60_000); // certificates are real (RSA 2048)

const deployment = (h: Harness): V1Deployment | undefined =>
  h.object<V1Deployment>('deployment', NAMES.controllerDeployment);
const budget = (h: Harness): V1PodDisruptionBudget | undefined =>
  h.object<V1PodDisruptionBudget>('podDisruptionBudget', NAMES.controllerDisruptionBudget);
const configHash = (h: Harness): string | undefined =>
  deployment(h)?.spec?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION];

/** The writes of one reconcile of `spec`. */
async function reconcileWith(h: Harness, spec: { controllerReplicas: number }): Promise<string[]> {
  h.putCr(spec);
  const before = h.kube.writes.length;
  await h.reconciler().reconcile(CR_NAME);
  return h.kube.writes.slice(before).filter((w) => !w.startsWith('status '));
}

describe('scaling the controller', () => {
  it('from one replica to three: rolling strategy and a disruption budget, same pod template', async () => {
    const h = harness();
    await reconcileWith(h, { controllerReplicas: 1 });
    expect(budget(h)).toBeUndefined();
    expect(deployment(h)?.spec?.strategy).toEqual({ type: 'Recreate' });
    const hash = configHash(h);

    expect(await reconcileWith(h, { controllerReplicas: 3 })).toEqual([
      `apply Deployment ${TEST_NAMESPACE}/${NAMES.controllerDeployment}`,
      `apply PodDisruptionBudget ${TEST_NAMESPACE}/${NAMES.controllerDisruptionBudget}`,
    ]);
    expect(deployment(h)?.spec).toMatchObject({
      replicas: 3,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      minReadySeconds: 75,
    });
    // The running controller pod stays: its template did not change.
    expect(configHash(h)).toBe(hash);
    expect(budget(h)?.spec?.minAvailable).toBe(1);
    expect(getCondition(h.cr().status?.conditions, 'DriverDeployed')).toMatchObject({ status: 'True' });
  });

  it('from three replicas back to one: Recreate again (merge patch first) and the budget deleted', async () => {
    const h = harness();
    await reconcileWith(h, { controllerReplicas: 3 });
    expect(budget(h)).toBeDefined();
    const uid = deployment(h)?.metadata?.uid;

    expect(await reconcileWith(h, { controllerReplicas: 1 })).toEqual([
      `patch Deployment ${TEST_NAMESPACE}/${NAMES.controllerDeployment}`,
      `apply Deployment ${TEST_NAMESPACE}/${NAMES.controllerDeployment}`,
      `delete PodDisruptionBudget ${TEST_NAMESPACE}/${NAMES.controllerDisruptionBudget}`,
    ]);
    expect(deployment(h)?.spec?.strategy).toEqual({ type: 'Recreate' });
    expect(deployment(h)?.spec?.minReadySeconds).toBeUndefined();
    expect(deployment(h)?.metadata?.uid).toBe(uid);
    expect(budget(h)).toBeUndefined();
    // Steady again: nothing to write.
    expect(await reconcileWith(h, { controllerReplicas: 1 })).toEqual([]);
  });

  it('rejects more replicas than the maximum without touching the running objects', async () => {
    const h = harness();
    await reconcileWith(h, { controllerReplicas: 2 });
    expect(await reconcileWith(h, { controllerReplicas: 6 })).toEqual([]);
    expect(h.cr().status?.phase).toBe('Failed');
    expect(getCondition(h.cr().status?.conditions, 'DriverDeployed')?.message).toContain(
      'spec.controllerReplicas: unsupported value 6; allowed values: integers from 1 to 5',
    );
    expect(deployment(h)?.spec?.replicas).toBe(2);
  });
});

describe('the registry Service of an operator before issue 17', () => {
  // It built the registry Service with a virtual IP; the apiserver allocated one.
  const withVirtualIp: readonly ObjectBuilder[] = BUILDERS.map((b) =>
    b.id !== 'registry-service'
      ? b
      : {
          ...b,
          mustRecreate: undefined,
          build: (cr, ctx) => {
            const built = b.build(cr, ctx) as (V1Service & KubeObject) | null;
            if (built === null) return null;
            const { clusterIP: _ip, publishNotReadyAddresses: _p, ...spec } = built.spec ?? {};
            return { ...built, spec } as KubeObject;
          },
        },
  );

  it('is deleted and created again headless (clusterIP is immutable); the metrics Service is left alone', async () => {
    const h = harness();
    h.putCr();
    await h.reconciler({ version: 'A', builders: withVirtualIp }).reconcile(CR_NAME);
    for (const [name, ip] of [
      [NAMES.registryService, '10.96.0.10'],
      [NAMES.metricsService, '10.96.0.11'],
    ] as const) {
      const live = h.object<V1Service & KubeObject>('service', name) as V1Service & KubeObject;
      h.kube.put({ ...live, spec: { ...live.spec, clusterIP: ip, clusterIPs: [ip] } } as KubeObject);
    }

    const before = h.kube.writes.length;
    await h.reconciler({ version: 'B' }).reconcile(CR_NAME);
    const serviceWrites = h.kube.writes.slice(before).filter((w) => w.includes(' Service '));
    expect(serviceWrites).toEqual([
      `delete Service ${TEST_NAMESPACE}/${NAMES.registryService}`,
      `apply Service ${TEST_NAMESPACE}/${NAMES.registryService}`,
      `apply Service ${TEST_NAMESPACE}/${NAMES.metricsService}`,
    ]);
    expect(h.object<V1Service>('service', NAMES.registryService)?.spec).toMatchObject({
      clusterIP: 'None',
      publishNotReadyAddresses: true,
    });
    expect(h.object<V1Service>('service', NAMES.metricsService)?.spec?.clusterIP).toBe('10.96.0.11');
    expect(getCondition(h.cr().status?.conditions, 'DriverDeployed')).toMatchObject({ status: 'True' });
  });
});

describe('the active controller replica in the status', () => {
  const LEASE = 'pmem-csi-intel-com'; // provisionerLeaseName(CR_NAME)
  const RESIZER_LEASE = 'external-resizer-pmem-csi-intel-com'; // resizerLeaseName(CR_NAME)
  /** A Lease as a sidecar's leader election writes it, renewed `renewedAgoMs` before now. */
  const putLease = (h: Harness, name: string, holder: string, renewedAgoMs = 0): void =>
    void h.kube.put({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: TEST_NAMESPACE },
      spec: {
        holderIdentity: holder,
        leaseDurationSeconds: 8,
        renewTime: new Date(h.clock.now() - renewedAgoMs).toISOString(),
      },
    } as KubeObject);
  const controller = (h: Harness): DriverComponentStatus | undefined =>
    h.cr().status?.driverComponents?.find((c) => c.component === 'Controller');
  /** The kinds of the objects read by name from now on. */
  const recordGets = (h: Harness): string[] => {
    const gets: string[] = [];
    const get = h.kube.get.bind(h.kube);
    h.kube.get = (async (...args: Parameters<typeof get>) => {
      gets.push(args[0].kind);
      return get(...args);
    }) as typeof h.kube.get;
    return gets;
  };

  it('is the holder of the Lease named after the driver, read by name without an informer cache', async () => {
    const h = harness();
    await reconcileWith(h, { controllerReplicas: 2 });
    h.workloadsReady();
    putLease(h, 'other-driver', 'someone-else');
    await h.reconciler().reconcile(CR_NAME);
    expect(controller(h)).not.toHaveProperty('active');
    putLease(h, LEASE, 'ctrl-a');
    const gets = recordGets(h);
    await h.reconciler().reconcile(CR_NAME);
    expect(controller(h)).toMatchObject({
      active: 'ctrl-a',
      reason: '2 of 2 controller pods ready, ctrl-a provisions',
    });
    expect(controller(h)).not.toHaveProperty('activeResizer');
    // Both Leases are read, the resizer's though nobody holds it yet.
    expect(gets.filter((k) => k === 'Lease')).toEqual(['Lease', 'Lease']);
  });

  it("comes from the informer's cache when there is one: no request for it", async () => {
    const h = harness();
    await reconcileWith(h, { controllerReplicas: 2 });
    h.workloadsReady();
    putLease(h, LEASE, 'ctrl-b');
    putLease(h, RESIZER_LEASE, 'ctrl-a');
    const cached = (): KubeObject[] => [...h.kube.objects.values()].filter((o) => o.kind === 'Lease');
    const gets = recordGets(h);
    await h.reconciler({ leases: cached }).reconcile(CR_NAME);
    expect(controller(h)).toMatchObject({ active: 'ctrl-b', activeResizer: 'ctrl-a' });
    expect(gets).toEqual(['PmemCSIDeployment']);
    // An empty cache means no Lease (not "unknown"): still no request.
    await h.reconciler({ leases: () => [] }).reconcile(CR_NAME);
    expect(controller(h)).not.toHaveProperty('active');
    expect(controller(h)).not.toHaveProperty('activeResizer');
    expect(gets.filter((k) => k === 'Lease')).toEqual([]);
  });

  it('is absent once the Lease ran out and while no controller pod is ready', async () => {
    const h = harness();
    await reconcileWith(h, { controllerReplicas: 2 });
    h.workloadsReady();
    putLease(h, LEASE, 'ctrl-a');
    await h.reconciler().reconcile(CR_NAME);
    expect(controller(h)?.active).toBe('ctrl-a');
    await h.clock.advance(8001);
    await h.reconciler().reconcile(CR_NAME);
    expect(controller(h)).not.toHaveProperty('active');
    putLease(h, LEASE, 'ctrl-a');
    h.workloadsReady({ controller: 0 });
    await h.reconciler().reconcile(CR_NAME);
    expect(controller(h)).not.toHaveProperty('active');
  });

  it("names the holder of external-resizer's Lease beside the provisioner's: two pods, then one pod in both roles", async () => {
    const h = harness();
    await reconcileWith(h, { controllerReplicas: 3 });
    h.workloadsReady();
    putLease(h, LEASE, 'ctrl-a');
    putLease(h, RESIZER_LEASE, 'ctrl-b');
    await h.reconciler().reconcile(CR_NAME);
    expect(controller(h)).toMatchObject({
      active: 'ctrl-a',
      activeResizer: 'ctrl-b',
      reason: '3 of 3 controller pods ready, ctrl-a provisions, ctrl-b resizes',
    });
    putLease(h, RESIZER_LEASE, 'ctrl-a');
    await h.reconciler().reconcile(CR_NAME);
    expect(controller(h)).toMatchObject({
      active: 'ctrl-a',
      activeResizer: 'ctrl-a',
      reason: '3 of 3 controller pods ready, ctrl-a provisions and resizes',
    });
    // Another driver's resizer Lease in the namespace is not this one's.
    putLease(h, RESIZER_LEASE, '');
    putLease(h, 'external-resizer-other-example-com', 'someone-else');
    await h.reconciler().reconcile(CR_NAME);
    expect(controller(h)).not.toHaveProperty('activeResizer');
    expect(controller(h)?.reason).toBe('3 of 3 controller pods ready, ctrl-a provisions');
  });

  it("drops the resizer's holder once its Lease ran out, while the provisioner's holder renews", async () => {
    const h = harness();
    await reconcileWith(h, { controllerReplicas: 2 });
    h.workloadsReady();
    // Renewed 7 s ago with 8 s to run: still held for one more second.
    putLease(h, RESIZER_LEASE, 'ctrl-b', 7000);
    putLease(h, LEASE, 'ctrl-a');
    await h.reconciler().reconcile(CR_NAME);
    expect(controller(h)).toMatchObject({ active: 'ctrl-a', activeResizer: 'ctrl-b' });
    await h.clock.advance(1001);
    putLease(h, LEASE, 'ctrl-a');
    await h.reconciler().reconcile(CR_NAME);
    expect(controller(h)).toMatchObject({
      active: 'ctrl-a',
      reason: '2 of 2 controller pods ready, ctrl-a provisions',
    });
    expect(controller(h)).not.toHaveProperty('activeResizer');
    // No ready controller pod: neither holder is named, whatever the Leases say.
    putLease(h, RESIZER_LEASE, 'ctrl-b');
    h.workloadsReady({ controller: 0 });
    await h.reconciler().reconcile(CR_NAME);
    expect(controller(h)).not.toHaveProperty('active');
    expect(controller(h)).not.toHaveProperty('activeResizer');
  });
});
