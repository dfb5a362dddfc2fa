// A reconciler wired to the fake apiserver, a manual clock and real (2048-bit) certificates.
import type { V1DaemonSet, V1Deployment } from '@kubernetes/client-node';
import { deploymentObjectNames, type PmemCSIDeploymentSpec } from '@pmem-csi/api';
import { createCa, createLeaf, nullLogger, verifyByHandshake } from '@pmem-csi/runtime';
import { DEFAULT_CERTIFICATE_POLICY, type CertDeps } from '../certs/certificates.js';
import type { EventRecorder } from '../status/events.js';
import type { KubeObject, LooseObject, ResourceType } from '../kube/kube-port.js';
import type { ObjectBuilder, OwnerDeployment } from '../objects/context.js';
import { Reconciler } from '../loop/deployment-reconciler.js';
import { RESOURCES } from '../kube/resources.js';
import type { StatusEvent } from '../status/deployment-status.js';
import { FakeKube } from './fake-kube.js';
import { TEST_NAMESPACE, testDeployment } from './fixtures.js';
import { ManualClock } from './manual-clock.js';

export const CR_NAME = 'pmem-csi.intel.com';
export const NAMES = deploymentObjectNames(CR_NAME);

export const testCertDeps: CertDeps = {
  policy: { ...DEFAULT_CERTIFICATE_POLICY, keyBits: 2048 },
  issuer: { createCa, createLeaf },
  verify: verifyByHandshake,
};

export interface Harness {
  readonly kube: FakeKube;
  readonly clock: ManualClock;
  /** Every recorded event, with the name of the CR it is about. */
  readonly events: Array<StatusEvent & { readonly deployment: string }>;
  readonly recorder: EventRecorder;
  reconciler(options?: {
    version?: string;
    image?: string;
    builders?: readonly ObjectBuilder[];
    deployments?: () => readonly KubeObject[] | undefined;
    owned?: (type: ResourceType, crName: string) => readonly KubeObject[] | undefined;
    leases?: () => readonly KubeObject[] | undefined;
    nodes?: () => readonly KubeObject[] | undefined;
  }): Reconciler;
  /**
   * Store a CR (as `kubectl apply` would), bumping its generation on spec changes. A new CR gets
   * its own uid (CR_NAME the fixture's) and the fake's next creation timestamp unless given.
   */
  putCr(
    spec?: PmemCSIDeploymentSpec,
    name?: string,
    meta?: { uid?: string; creationTimestamp?: string },
  ): OwnerDeployment;
  cr(name?: string): OwnerDeployment;
  object<T = LooseObject>(kind: keyof typeof RESOURCES, name: string): T | undefined;
  /** Play the workload controllers: all pods ready (or the given counts). */
  workloadsReady(counts?: { controller?: number; nodes?: number; nodesReady?: number }): void;
}

export function harness(): Harness {
  const kube = new FakeKube();
  const clock = new ManualClock(Date.now());
  const events: Array<StatusEvent & { deployment: string }> = [];
  const recorder: EventRecorder = { record: async (cr, e) => void events.push({ ...e, deployment: cr.metadata.name }) };
  const object = <T = LooseObject>(kind: keyof typeof RESOURCES, name: string): T | undefined => {
    const type = RESOURCES[kind];
    return kube.objects.get(`${type.apiVersion}/${type.kind}|${type.namespaced ? TEST_NAMESPACE : ''}|${name}`) as
      T | undefined;
  };
  const cr = (name = CR_NAME): OwnerDeployment => object<OwnerDeployment>('pmemCsiDeployment', name) as OwnerDeployment;
  return {
    kube,
    clock,
    events,
    recorder,
    reconciler: (o = {}) =>
      new Reconciler({
        kube,
        namespace: TEST_NAMESPACE,
        operatorVersion: o.version ?? 'A',
        operatorImage: o.image ?? 'example.org/pmem-csi-driver:A',
        certs: testCertDeps,
        events: recorder,
        log: nullLogger,
        clock,
        ...(o.builders === undefined ? {} : { builders: o.builders }),
        ...(o.deployments === undefined ? {} : { deployments: o.deployments }),
        ...(o.owned === undefined ? {} : { owned: o.owned }),
        ...(o.leases === undefined ? {} : { leases: o.leases }),
        ...(o.nodes === undefined ? {} : { nodes: o.nodes }),
      }),
    putCr(spec = {}, name = CR_NAME, meta = {}) {
      const existing = object<OwnerDeployment>('pmemCsiDeployment', name);
      const base = testDeployment(spec, name);
      const uid = existing?.metadata.uid ?? meta.uid ?? (name === CR_NAME ? base.metadata.uid : `uid-of-${name}`);
      const created = meta.creationTimestamp === undefined ? {} : { creationTimestamp: meta.creationTimestamp };
      const next = {
        ...base,
        metadata: { ...base.metadata, ...created, uid },
        ...(existing?.status === undefined ? {} : { status: existing.status }),
      };
      return kube.put(next as unknown as KubeObject) as unknown as OwnerDeployment;
    },
    cr,
    object,
    workloadsReady(counts = {}) {
      const replicas = object<V1Deployment>('deployment', NAMES.controllerDeployment)?.spec?.replicas ?? 1;
      const ready = counts.controller ?? replicas;
      kube.setStatus(
        { ...RESOURCES.deployment, namespace: TEST_NAMESPACE, name: NAMES.controllerDeployment },
        { replicas, readyReplicas: ready, updatedReplicas: ready, availableReplicas: ready },
      );
      const nodes = counts.nodes ?? 3;
      const ds: Partial<V1DaemonSet['status']> = {
        desiredNumberScheduled: nodes,
        currentNumberScheduled: nodes,
        numberReady: counts.nodesReady ?? nodes,
        updatedNumberScheduled: nodes,
        numberMisscheduled: 0,
      };
      kube.setStatus(
        { ...RESOURCES.daemonSet, namespace: TEST_NAMESPACE, name: NAMES.nodeDaemonSet },
        ds as Record<string, unknown>,
      );
    },
  };
}

/** From now on, the kind of every list request the fake answers (the array grows as they come). */
export function recordLists(kube: FakeKube): string[] {
  const lists: string[] = [];
  const list = kube.list.bind(kube);
  kube.list = (async (...args: Parameters<typeof list>) => {
    lists.push(args[0].kind);
    return list(...args);
  }) as typeof kube.list;
  return lists;
}
