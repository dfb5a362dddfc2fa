// The controller's high availability (issue 17) in the builders: strategy and minReadySeconds per
// replica count, leader-election timings that fit the 15-s failover target, anti-affinity, the
// disruption budget and the headless registry Service.
import type { V1Deployment, V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import { MAX_CONTROLLER_REPLICAS, selectorLabels } from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import { testContext, testDeployment } from '../testing/fixtures.js';
import { buildControllerDeployment, provisionerArgs } from './controller.js';
import {
  CONTROLLER_MIN_READY_SECONDS,
  LEADER_ELECTION,
  PROVISIONER_CLIENT_LIMITS,
  buildControllerDisruptionBudget,
  strategyPrepatch,
} from './controller-ha.js';
import { buildMetricsService, buildRegistryService, clusterIpMustRecreate } from './services.js';

const build = (controllerReplicas: number): { deployment: V1Deployment; pdb: V1PodDisruptionBudget | null } => {
  const cr = testDeployment({ controllerReplicas });
  const ctx = testContext(cr);
  return {
    deployment: buildControllerDeployment(cr, ctx) as V1Deployment,
    pdb: buildControllerDisruptionBudget(cr, ctx),
  };
};

/** Seconds of a Go duration as the sidecar takes it ("8s", "1500ms"). */
function seconds(duration: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(duration);
  if (m === null) throw new Error(`not a duration: ${duration}`);
  return Number(m[1]) / (m[2] === 'ms' ? 1000 : 1);
}

describe('controller Deployment per replica count', () => {
  it('keeps Recreate and no minReadySeconds for one replica', () => {
    const { deployment } = build(1);
    expect(deployment.spec?.replicas).toBe(1);
    expect(deployment.spec?.strategy).toEqual({ type: 'Recreate' });
    expect(deployment.spec?.minReadySeconds).toBeUndefined();
  });

  it('rolls one pod at a time without surge, each new pod settled first, from two replicas up to the maximum', () => {
    for (let replicas = 2; replicas <= MAX_CONTROLLER_REPLICAS; replicas++) {
      const { deployment } = build(replicas);
      expect(deployment.spec?.replicas).toBe(replicas);
      expect(deployment.spec?.strategy).toEqual({
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
      });
      expect(deployment.spec?.minReadySeconds).toBe(CONTROLLER_MIN_READY_SECONDS);
    }
  });

  it('builds the same pod template for every replica count: scaling restarts no running controller', () => {
    const template = build(1).deployment.spec?.template;
    for (let replicas = 2; replicas <= MAX_CONTROLLER_REPLICAS; replicas++)
      expect(build(replicas).deployment.spec?.template).toEqual(template);
  });

  it('prefers to spread the replicas over nodes, selecting exactly its own pods', () => {
    const { deployment } = build(3);
    const terms = deployment.spec?.template.spec?.affinity?.podAntiAffinity;
    expect(terms?.requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
    expect(terms?.preferredDuringSchedulingIgnoredDuringExecution).toEqual([
      {
        weight: 100,
        podAffinityTerm: {
          labelSelector: { matchLabels: deployment.spec?.selector.matchLabels },
          topologyKey: 'kubernetes.io/hostname',
        },
      },
    ]);
  });
});

describe('leader election of the provisioners', () => {
  const args = provisionerArgs(testContext(testDeployment()));
  const flag = (name: string): string | undefined =>
    args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

  it('passes the timings to external-provisioner, in the operator namespace', () => {
    expect(flag('leader-election')).toBe('true');
    expect(flag('leader-election-namespace')).toBe('pmem-csi');
    expect(flag('leader-election-lease-duration')).toBe(LEADER_ELECTION.leaseDuration);
    expect(flag('leader-election-renew-deadline')).toBe(LEADER_ELECTION.renewDeadline);
    expect(flag('leader-election-retry-period')).toBe(LEADER_ELECTION.retryPeriod);
  });

  it("meets client-go's constraints and takes over within 15 s of the holder's death at worst", () => {
    const lease = seconds(LEADER_ELECTION.leaseDuration);
    const renew = seconds(LEADER_ELECTION.renewDeadline);
    const retry = seconds(LEADER_ELECTION.retryPeriod);
    const jitter = 1.2; // client-go's JitterFactor
    expect(lease).toBeGreaterThan(renew);
    expect(renew).toBeGreaterThan(jitter * retry);
    // Last renewal seen up to one jittered retry late, then the lease, then the next jittered retry;
    // one second for the new leader to start its provisioning controllers.
    expect(lease + 2 * jitter * retry + 1).toBeLessThanOrEqual(15);
  });

  it("raises the sidecar's API client limit above its defaults (5/s, burst 10), so a new leader's backlog clears fast", () => {
    expect(flag('kube-api-qps')).toBe(String(PROVISIONER_CLIENT_LIMITS.qps));
    expect(flag('kube-api-burst')).toBe(String(PROVISIONER_CLIENT_LIMITS.burst));
    expect(PROVISIONER_CLIENT_LIMITS.qps).toBeGreaterThan(5);
    expect(PROVISIONER_CLIENT_LIMITS.burst).toBeGreaterThanOrEqual(PROVISIONER_CLIENT_LIMITS.qps);
    // Each flag once: external-provisioner would take the last of two.
    expect(args.filter((a) => a.startsWith('--kube-api-')).length).toBe(2);
  });
});

describe('controller disruption budget', () => {
  it('is not built for one replica', () => {
    expect(build(1).pdb).toBeNull();
  });

  it('keeps one controller pod available from two replicas on, selecting what the Deployment selects', () => {
    for (let replicas = 2; replicas <= MAX_CONTROLLER_REPLICAS; replicas++) {
      const { deployment, pdb } = build(replicas);
      expect(pdb?.spec).toEqual({ minAvailable: 1, selector: { matchLabels: deployment.spec?.selector.matchLabels } });
      expect(pdb?.metadata?.name).toBe('pmem-csi-intel-com-controller');
    }
    expect(build(2).pdb?.spec?.selector?.matchLabels).toEqual(selectorLabels('pmem-csi.intel.com', 'controller'));
  });
});

describe('strategyPrepatch', () => {
  const deployment = (strategy: object): KubeObject =>
    ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'c', namespace: 'n', resourceVersion: '7' },
      spec: { strategy },
    }) as KubeObject;
  const rolling = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } };

  it('drops the live rollingUpdate when scaling down to one replica switches to Recreate', () => {
    expect(strategyPrepatch(deployment(rolling), deployment({ type: 'Recreate' }))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'c', namespace: 'n', resourceVersion: '7' },
      spec: { strategy: { type: 'Recreate', rollingUpdate: null } },
    });
  });

  it('sends nothing when the desired strategy is RollingUpdate or the live one has no rollingUpdate', () => {
    expect(strategyPrepatch(deployment({ type: 'Recreate' }), deployment(rolling))).toBeUndefined();
    expect(strategyPrepatch(deployment({ type: 'Recreate' }), deployment({ type: 'Recreate' }))).toBeUndefined();
  });
});

describe('registry Service', () => {
  const cr = testDeployment({ controllerReplicas: 3 });
  const registry = buildRegistryService(cr, testContext(cr)) as V1Service & KubeObject;
  const metrics = buildMetricsService(cr, testContext(cr)) as V1Service & KubeObject;
  const live = (service: V1Service & KubeObject, clusterIP: string): KubeObject =>
    ({ ...service, spec: { ...service.spec, clusterIP, clusterIPs: [clusterIP] } }) as KubeObject;

  it('is headless and publishes pods before they are ready, so that its name resolves to every replica', () => {
    expect(registry.spec).toMatchObject({ type: 'ClusterIP', clusterIP: 'None', publishNotReadyAddresses: true });
    expect(registry.spec?.selector).toEqual(selectorLabels('pmem-csi.intel.com', 'controller'));
  });

  it('is recreated when the live one has a virtual IP (built before issue 17), not when it is headless', () => {
    expect(clusterIpMustRecreate(live(registry, '10.96.0.10'), registry)).toBe(true);
    expect(clusterIpMustRecreate(live(registry, 'None'), registry)).toBe(false);
  });

  it('leaves the metrics Service a normal Service with whatever IP it was given', () => {
    expect(metrics.spec?.clusterIP).toBeUndefined();
    expect(clusterIpMustRecreate(live(metrics, '10.96.0.11'), metrics)).toBe(false);
  });
});
