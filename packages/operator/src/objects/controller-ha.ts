// How the controller replicas share the work and survive each other's loss (issue 17). Every node
// driver registers with every replica (the registry Service is headless: services.ts), so each one
// holds the whole node registry; external-provisioner's leader election picks the one replica that
// provisions, the others stand by. This module holds what the Deployment and its
// PodDisruptionBudget need for that:
// - leader-election timings for a failover within 15 s of the active replica's death;
// - the rollout strategy: Recreate for one replica, RollingUpdate one pod at a time for more;
// - preferred anti-affinity between the replicas;
// - the PodDisruptionBudget (two or more replicas).
import type { V1Affinity, V1DeploymentStrategy, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { deploymentObjectNames, selectorLabels } from '@pmem-csi/api';
import type { KubeObject, LooseObject } from '../kube/kube-port.js';
import { RESOURCES } from '../kube/resources.js';
import type { Built, BuildContext, OwnerDeployment } from './context.js';
import { objectMeta } from './meta.js';

/** From this many replicas on, the controller rolls one pod at a time and has a disruption budget. */
export const HA_MIN_REPLICAS = 2;

/**
 * external-provisioner's leader election (csi-lib-utils; defaults 15 s / 10 s / 5 s). A holder that
 * dies does not release its Lease (the sidecar sets no ReleaseOnCancel, and a crash cannot), so a
 * standby takes over once the Lease has not changed for `leaseDuration` *as the standby observed
 * it* (client-go times the lease from when it saw the record change, at its last poll), at its next
 * retry: lease + up to two retry periods (client-go adds up to 20 % jitter to each) after the last
 * renewal, 6 s + 2 × 1.8 s = 9.6 s at worst, against 15 s + 2 × 6 s = 27 s with the defaults; the
 * new leader then starts its provisioning controllers and works off the claims made meanwhile
 * (about a second). 8 s / 6 s / 2 s (until 2026-12) came too close to the 15-s target at their
 * worst case of 12.8 s (the real node's takeovers: docs/controller-ha.md, "On the real node").
 * The holder gives up — and the sidecar exits, to be restarted — when it could not renew for
 * `renewDeadline`: 4 s rides out an apiserver hiccup of a few seconds. The lease also fences a
 * create the dead holder started (docs/controller-ha.md): 6 s is still several times an lvcreate
 * or ndctl create-namespace. client-go requires lease > renew deadline > 1.2 × retry. The price is
 * one Lease update by the holder and one read by each standby every 1.5 s: at most
 * MAX_CONTROLLER_REPLICAS (5) requests per 1.5 s per driver.
 */
export const LEADER_ELECTION = { leaseDuration: '6s', renewDeadline: '4s', retryPeriod: '1.5s' } as const;

/** external-provisioner flags of the leader election between the controller replicas. */
export function leaderElectionArgs(namespace: string): string[] {
  return [
    '--leader-election=true',
    `--leader-election-namespace=${namespace}`,
    `--leader-election-lease-duration=${LEADER_ELECTION.leaseDuration}`,
    `--leader-election-renew-deadline=${LEADER_ELECTION.renewDeadline}`,
    `--leader-election-retry-period=${LEADER_ELECTION.retryPeriod}`,
  ];
}

/**
 * external-provisioner's client-side rate limit for the API server (its defaults: 5 requests/s,
 * burst 10). Only the Lease holder provisions, so this is the driver's whole provisioning budget.
 * A new leader starts with the backlog of every claim made while nobody led, and each claim costs a
 * few requests (the PersistentVolume, events). In the cluster tier's failover test, working off the
 * claims of a pod kill at the default rate took a large part of the time to resume, the sidecar
 * logging client-side throttling (measured: docs/controller-ha.md). 20/s with a burst of 50
 * is four times that and still a small share of the API server's default 400 + 200 in-flight
 * requests.
 */
export const PROVISIONER_CLIENT_LIMITS = { qps: 20, burst: 50 } as const;

/** external-provisioner flags of its API client's rate limit. */
export function provisionerClientLimitArgs(): string[] {
  return [`--kube-api-qps=${PROVISIONER_CLIENT_LIMITS.qps}`, `--kube-api-burst=${PROVISIONER_CLIENT_LIMITS.burst}`];
}

/**
 * How long a new controller pod must have been ready before the rollout counts it available and
 * replaces the next one: the controller's default start-up settle period (packages/controller
 * settleMsFor: 1.5 × the 30-s node lease + (120 s − 30 s) / 3 = 75 s), during which it refuses
 * CreateVolume because nodes may not have re-registered with it yet. Without it a rollout could
 * replace every settled replica within seconds and leave the Lease to one that answers UNAVAILABLE.
 */
export const CONTROLLER_MIN_READY_SECONDS = 75;

/**
 * One replica: Recreate, as before issue 17. A surge would run two controllers for a while, which
 * works only with node drivers that register with every replica; while an upgrade from an older
 * version rolls the DaemonSet, old node drivers register with one address of the Service, possibly
 * the pod without the Lease. Recreate keeps one replica working with any node driver (and needs no
 * room for a second pod); a rollout pauses provisioning for the new pod's settle period, as before.
 * Whoever needs no pause runs two replicas.
 * Two or more: RollingUpdate one pod at a time (maxUnavailable 1) without surge (maxSurge 0): the
 * others keep serving, the next old pod goes only once the new one has settled (minReadySeconds),
 * no node ever registers with more than controllerReplicas replicas (the bound that
 * MAX_CONTROLLER_REPLICAS promises), and no extra pod needs room beside the spread ones.
 */
export function controllerStrategy(replicas: number): V1DeploymentStrategy {
  return replicas >= HA_MIN_REPLICAS
    ? { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } }
    : { type: 'Recreate' };
}

/** minReadySeconds of the controller Deployment: only where a rollout replaces pods one by one. */
export function controllerMinReadySeconds(replicas: number): { minReadySeconds?: number } {
  return replicas >= HA_MIN_REPLICAS ? { minReadySeconds: CONTROLLER_MIN_READY_SECONDS } : {};
}

/**
 * Replicas on different nodes where possible, so that losing a node costs at most one. Preferred,
 * not required: a cluster with fewer schedulable nodes than replicas still runs all of them (a
 * replica beside another still covers a crash of the other's process). Set for any replica count,
 * so that scaling changes no pod template and restarts no running controller.
 */
export function controllerAffinity(crName: string): V1Affinity {
  return {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: {
            labelSelector: { matchLabels: selectorLabels(crName, 'controller') },
            topologyKey: 'kubernetes.io/hostname',
          },
        },
      ],
    },
  };
}

const strategyOf = (o: KubeObject): V1DeploymentStrategy | undefined =>
  (o as { spec?: { strategy?: V1DeploymentStrategy } }).spec?.strategy;

/**
 * Switching a live RollingUpdate Deployment to Recreate: the apiserver refuses Recreate next to a
 * `rollingUpdate` ("spec.strategy.rollingUpdate: Forbidden"). Server-side apply would remove ours
 * (two or more replicas scaled down to one), but not the apiserver's default one (maxSurge and
 * maxUnavailable 25 %) of Deployments built before the strategy was Recreate, which belongs to no
 * field manager. A merge patch switches the strategy first, on exactly the live object that was
 * checked (resourceVersion precondition); it changes no pod template, so it starts no rollout.
 */
export function strategyPrepatch(live: KubeObject, desired: KubeObject): LooseObject | undefined {
  if (strategyOf(desired)?.type !== 'Recreate' || strategyOf(live)?.rollingUpdate === undefined) return undefined;
  const { name, namespace, resourceVersion } = live.metadata;
  return {
    apiVersion: live.apiVersion,
    kind: live.kind,
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    },
    spec: { strategy: { type: 'Recreate', rollingUpdate: null } },
  };
}

/**
 * With two or more replicas: a node drain or the cluster autoscaler may evict one controller pod at
 * a time but never the last ready one, so a standby is there to take the Lease. With one replica
 * nothing is built (minAvailable 1 would block every drain of its node), and a budget left from a
 * larger count is deleted as obsolete (kinds.ts).
 */
export function buildControllerDisruptionBudget(cr: OwnerDeployment, ctx: BuildContext): Built<V1PodDisruptionBudget> {
  if (ctx.spec.controllerReplicas < HA_MIN_REPLICAS) return null;
  const name = deploymentObjectNames(cr.metadata.name).controllerDisruptionBudget;
  return {
    apiVersion: RESOURCES.podDisruptionBudget.apiVersion,
    kind: RESOURCES.podDisruptionBudget.kind,
    metadata: objectMeta(cr, ctx, { name, namespaced: true, component: 'controller' }),
    spec: {
      minAvailable: 1,
      selector: { matchLabels: selectorLabels(cr.metadata.name, 'controller') },
    },
  };
}
