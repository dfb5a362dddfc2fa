// One reconcile of one PmemCSIDeployment, level-triggered: read the CR and everything the operator
// built for it, decide (object-name precedence, validation, device-mode guard, certificates,
// ownership of every live object it would write: plan/ownership.ts; the nodes kept for earlier
// PMEM-managing deployments: plan/pmem-overlap.ts), apply what differs in order
// (Secrets, identities and RBAC, Services, CSIDriver, workloads), delete obsolete objects, and
// write the status only when it changed. Errors are thrown after the status says what failed, so
// the queue retries with backoff. Objects built by another operator version differ in their
// version annotation, so an upgraded operator updates every object of every CR in place.
// The Go operator's objects: go-takeover.ts (Go-only ones deleted first, the others taken over by the plan).
import type { V1DaemonSet, V1Deployment, V1Secret } from '@kubernetes/client-node';
import {
  FIELD_MANAGER,
  LABEL_KEYS,
  deploymentObjectNames,
  provisionerLeaseName,
  resizerLeaseName,
  statusEqual,
  validateDeployment,
  withDefaults,
  type ConditionUpdate,
  type DefaultedSpec,
} from '@pmem-csi/api';
import { errorMessage } from '@pmem-csi/csi';
import type { Logger } from '@pmem-csi/runtime';
import { planCertificates, type CertDeps, type ExistingCertSecrets } from '../certs/certificates.js';
import type { Clock } from '../clock.js';
import { deployedDeviceMode, deviceModeRefusal, volumesOfDriver } from '../plan/device-mode-guard.js';
import type { EventRecorder } from '../status/events.js';
import { isNotFound } from '../kube/kube-errors.js';
import { describeRef, refOf, type KubeApi, type KubeObject, type ResourceType } from '../kube/kube-port.js';
import type { ObjectBuilder, OwnerDeployment } from '../objects/context.js';
import { EVER_CREATED_KINDS } from '../objects/kinds.js';
import { BUILDERS, buildDesiredObjects } from '../objects/registry.js';
import {
  OWNERSHIP_RECHECK_MS,
  OwnershipConflictError,
  nameCollision,
  ownershipConflict,
  summarizeConflicts,
  takenOverFrom,
  type ConflictFinding,
} from '../plan/ownership.js';
import { emulatedPmem } from '../status/emulated-pmem.js';
import { earlierPmemDeployments, placementOf, pmemOverlapPlan, type PmemOverlapPlan } from '../plan/pmem-overlap.js';
import { ownedSelector, planObjects } from '../plan/object-plan.js';
import type { HandlerResult } from './queue.js';
import { ObjectWriter, type ResolvedStep, type WriteContext, type WriteResult } from './object-writer.js';
import { GoOperatorTakeover } from './go-takeover.js';
import { goOperatorFieldsCondition } from '../status/go-operator.js';
import { RESOURCES } from '../kube/resources.js';
import { activeReplicas, type ActiveReplicas } from '../status/active-controller.js';
import {
  DEPLOY_REASONS,
  nextStatus,
  statusEvents,
  type ReconcileOutcome,
  type Refusal,
} from '../status/deployment-status.js';

export interface ReconcilerOptions {
  readonly kube: KubeApi;
  /** Where namespaced children go (the operator's namespace). */
  readonly namespace: string;
  readonly operatorVersion: string;
  /** Driver image unless a spec pins one: the operator's own image. */
  readonly operatorImage: string;
  readonly certs: CertDeps;
  readonly events: EventRecorder;
  readonly log: Logger;
  readonly clock: Clock;
  /** Builders and cleanup kinds; tests substitute older "versions". */
  readonly builders?: readonly ObjectBuilder[];
  readonly kinds?: readonly ResourceType[];
  /**
   * The PmemCSIDeployments as the operator's informer holds them, or undefined until it listed
   * them once. Without it (and while it answers undefined) every reconcile lists them.
   */
  readonly deployments?: () => readonly KubeObject[] | undefined;
  /**
   * The objects of one kind labelled as built for CR `crName`, as the operator's informers hold
   * them, or undefined while that kind's informer has not listed once (the kind is then listed).
   */
  readonly owned?: (type: ResourceType, crName: string) => readonly KubeObject[] | undefined;
  /**
   * The Leases in the operator's namespace as the operator's informer holds them, or undefined
   * until it listed them once (the provisioner's Lease is then read by name).
   */
  readonly leases?: () => readonly KubeObject[] | undefined;
  /**
   * The Nodes as the operator's informer holds them (names and labels), or undefined until it
   * listed them once. Read only by a CR that earlier PMEM-managing deployments overlap (the nodes
   * it is kept off, in PmemOverlap); without it such a reconcile lists them.
   */
  readonly nodes?: () => readonly KubeObject[] | undefined;
}

const MIN_REQUEUE_MS = 1000;
const MAX_REQUEUE_MS = 24 * 60 * 60 * 1000;

interface EffectiveSpec {
  readonly spec: DefaultedSpec;
  readonly refusal?: Refusal;
}

/** Why an applied spec still fails: the device-mode guard's refusal, else PmemOverlap's. */
const refusalOf = (effective: EffectiveSpec, overlap: PmemOverlapPlan): Refusal | undefined =>
  effective.refusal ??
  (overlap.refusal === undefined
    ? undefined
    : { reason: DEPLOY_REASONS.tooManyExclusionTerms, message: overlap.refusal });

/** An object this reconcile takes from a PmemCSIDeployment that comes later by the ownership rule. */
interface Takeover {
  /** "Kind namespace/name". */
  readonly object: string;
  /** The name of the deployment that controls it now. */
  readonly from: string;
}

/** The objects among `steps` that the reconcile of `cr` takes over (plan/ownership.ts takenOverFrom). */
function takeoversOf(steps: readonly ResolvedStep[], { cr, deployments }: WriteContext): Takeover[] {
  return steps.flatMap((step) => {
    const from = step.current === undefined ? undefined : takenOverFrom(step.current, cr, deployments);
    return from === undefined ? [] : [{ object: describeRef(refOf(step.object)), from: from.metadata.name }];
  });
}

export class Reconciler {
  readonly #o: ReconcilerOptions;
  readonly #builders: readonly ObjectBuilder[];
  readonly #kinds: readonly ResourceType[];
  readonly #writer: ObjectWriter;
  readonly #go: GoOperatorTakeover;

  constructor(options: ReconcilerOptions) {
    this.#o = options;
    this.#writer = new ObjectWriter(options.kube, options.log, options.clock);
    this.#go = new GoOperatorTakeover(options.kube, options.namespace, options.events);
    this.#builders = options.builders ?? BUILDERS;
    this.#kinds = options.kinds ?? EVER_CREATED_KINDS;
  }

  /** Reconcile the PmemCSIDeployment `name`. */
  async reconcile(name: string): Promise<HandlerResult> {
    const cr = await this.#o.kube.get<OwnerDeployment>({ ...RESOURCES.pmemCsiDeployment, name });
    // Deleted: the garbage collector removes the children through their owner references.
    if (cr === undefined || cr.metadata.deletionTimestamp !== undefined) return {};
    const log = this.#o.log.child({ deployment: name, generation: cr.metadata.generation });
    const deployments = await this.#deployments();
    // Before anything is read or generated: another CR with the same object names comes first.
    const collision = nameCollision(cr, deployments, this.#o.namespace);
    if (collision !== undefined) return this.#refuse(cr, collision, log, undefined);
    const problems = validateDeployment(cr);
    if (problems.length > 0) {
      const goFields = goOperatorFieldsCondition(cr.spec, cr.status?.conditions);
      await this.#finish(cr, { kind: 'invalid-spec', problems, conditions: goFields === undefined ? [] : [goFields] });
      return {};
    }
    return this.#deploy({ cr, deployments, log });
  }

  /** Certificates, objects and status of a valid CR that keeps its object names. */
  async #deploy(context: WriteContext): Promise<HandlerResult> {
    const { cr, log } = context;
    const { clock } = this.#o;
    const live = await this.#listOwned(cr);
    const go = await this.#go.find(cr, live, log);
    const effective = await this.#effectiveSpec(cr, live, go.nodeDaemonSet);
    const now = new Date(clock.now());
    const certs = await planCertificates({ cr, existing: await this.#certSecrets(cr, live), now }, this.#o.certs);
    if (!certs.ok) {
      await this.#finish(cr, {
        kind: 'certs-invalid',
        reason: certs.reason,
        conditions: [certs.verified, certs.ready],
      });
      return {};
    }
    if (certs.changes.length > 0) log.info('certificates issued', { changes: certs.changes });
    const verified: ConditionUpdate[] = certs.verified === undefined ? [] : [certs.verified];
    // One driver per node's PMEM: kept off the nodes of earlier PMEM-managing deployments.
    const overlap = await this.#pmemOverlap(cr, effective.spec, context.deployments);
    const ctx = {
      namespace: this.#o.namespace,
      operatorVersion: this.#o.operatorVersion,
      spec: effective.spec,
      certs: certs.secrets,
      ...(overlap.nodeExclusion === undefined ? {} : { nodeExclusion: overlap.nodeExclusion }),
    };
    const refusal = refusalOf(effective, overlap);
    const plan = planObjects(buildDesiredObjects(cr, ctx, this.#builders), live, cr, this.#kinds);
    const steps = await this.#writer.resolve(plan);
    // Before the first write: every object it would change is ours or nobody's.
    const foreign =
      go.elsewhere ??
      summarizeConflicts(
        steps.flatMap((step) =>
          step.current === undefined ? [] : (ownershipConflict(step.current, cr, context.deployments) ?? []),
        ),
      );
    if (foreign !== undefined) return this.#refuse(cr, foreign, log, OWNERSHIP_RECHECK_MS);
    const takeovers = takeoversOf(steps, context);
    let written: WriteResult;
    let removed: string[];
    try {
      // The Go driver's webhook registration first: no pod creation waits for a webhook going away.
      removed = await this.#go.removeGoOnly(go.goOnly, log);
      written = await this.#writer.execute(steps, plan.delete, context);
    } catch (e) {
      if (e instanceof OwnershipConflictError) return this.#refuse(cr, e.finding, log, OWNERSHIP_RECHECK_MS);
      await this.#finish(cr, { kind: 'apply-failed', error: errorMessage(e), conditions: verified });
      throw e;
    }
    const applied = written.applied;
    const workload = <T>(kind: string, name: string): T | undefined =>
      [...applied, ...live].find((o) => o.kind === kind && o.metadata.name === name) as T | undefined;
    const names = deploymentObjectNames(cr.metadata.name);
    // A notice for as long as the driver runs on loop-backed files instead of PMEM.
    const emulated = emulatedPmem(cr.metadata.name, effective.spec, cr.status?.conditions);
    const active = await this.#activeReplicas(cr, clock.now());
    const goFields = goOperatorFieldsCondition(cr.spec, cr.status?.conditions);
    await this.#finish(cr, {
      kind: 'applied',
      conditions: [...verified, certs.ready, ...[overlap.condition, emulated, goFields].filter((c) => c !== undefined)],
      ...(refusal === undefined ? {} : { refusal }),
      deployment: workload<V1Deployment>(RESOURCES.deployment.kind, names.controllerDeployment),
      daemonSet: workload<V1DaemonSet>(RESOURCES.daemonSet.kind, names.nodeDaemonSet),
      active,
    });
    await this.#tookOver(takeovers, context);
    await this.#go.done(steps, { recreated: written.recreated, removed }, context);
    const untilCheck = certs.nextCheck.getTime() - clock.now();
    return { requeueAfterMs: Math.min(MAX_REQUEUE_MS, Math.max(MIN_REQUEUE_MS, untilCheck)) };
  }

  /** The PmemCSIDeployments: from the informer once it listed them, else from the apiserver. */
  async #deployments(): Promise<readonly KubeObject[]> {
    return this.#o.deployments?.() ?? (await this.#o.kube.list(RESOURCES.pmemCsiDeployment)).items;
  }

  /**
   * The exclusion of earlier PMEM-managing deployments' nodes and PmemOverlap for `cr` deployed
   * with `spec` (plan/pmem-overlap.ts). The Nodes are read only when some earlier one overlaps.
   */
  async #pmemOverlap(
    cr: OwnerDeployment,
    spec: DefaultedSpec,
    deployments: readonly KubeObject[],
  ): Promise<PmemOverlapPlan> {
    const mine = placementOf(cr, spec);
    const earlier = earlierPmemDeployments(mine, deployments, (name) => this.#deployedMode(name));
    const nodes = earlier.length === 0 ? [] : (this.#o.nodes?.() ?? (await this.#o.kube.list(RESOURCES.node)).items);
    return pmemOverlapPlan(mine, earlier, nodes, cr.status?.conditions);
  }

  /** The device mode CR `name`'s node DaemonSet was deployed with, from the informer cache (else unknown). */
  #deployedMode(name: string): string | undefined {
    const dsName = deploymentObjectNames(name).nodeDaemonSet;
    return deployedDeviceMode(this.#o.owned?.(RESOURCES.daemonSet, name)?.find((o) => o.metadata.name === dsName));
  }

  /** Who holds external-provisioner's and external-resizer's leader-election Lease of `cr`'s driver. */
  async #activeReplicas(cr: OwnerDeployment, now: number): Promise<ActiveReplicas> {
    const [provisioner, resizer] = await Promise.all([
      this.#lease(provisionerLeaseName(cr.metadata.name)),
      this.#lease(resizerLeaseName(cr.metadata.name)),
    ]);
    return activeReplicas({ provisioner, resizer }, now);
  }

  /** A sidecar's leader-election Lease: from the informer once it listed, else read by name. */
  async #lease(name: string): Promise<KubeObject | undefined> {
    const cached = this.#o.leases?.();
    if (cached !== undefined) return cached.find((l) => l.metadata.name === name);
    return this.#o.kube.get({ ...RESOURCES.lease, namespace: this.#o.namespace, name });
  }

  /** Log and record (Normal event ObjectsTakenOver) the objects this reconcile took from later deployments. */
  async #tookOver(takeovers: readonly Takeover[], { cr, log }: WriteContext): Promise<void> {
    for (const from of new Set(takeovers.map((t) => t.from))) {
      const objects = takeovers.filter((t) => t.from === from);
      log.info('took over objects of a deployment that comes later by the ownership rule', {
        from,
        objects: objects.map((t) => t.object),
      });
      await this.#o.events.record(cr, {
        type: 'Normal',
        reason: 'ObjectsTakenOver',
        message:
          `took over ${objects.length} object(s) controlled by PmemCSIDeployment "${from}" (first: ${objects[0]?.object ?? ''}), ` +
          `which comes after this deployment by the ownership rule of colliding object names and is refused with Conflict=True (NameCollision)`,
      });
    }
  }

  /** Refused for a conflict: status (Conflict True, phase Failed) and event; nothing else is written. */
  async #refuse(
    cr: OwnerDeployment,
    finding: ConflictFinding,
    log: Logger,
    requeueAfterMs: number | undefined,
  ): Promise<HandlerResult> {
    log.warn('deployment refused: conflict', { reason: finding.reason, message: finding.message });
    await this.#finish(cr, { kind: 'conflict', ...finding });
    return requeueAfterMs === undefined ? {} : { requeueAfterMs };
  }

  /**
   * Everything labelled as built for this CR, of every kind any operator version created: from
   * the informers' caches where they have listed, else from the apiserver.
   */
  async #listOwned(cr: OwnerDeployment): Promise<KubeObject[]> {
    const labelSelector = ownedSelector(cr.metadata.name);
    const lists = await Promise.all(
      this.#kinds.map(async (type) => {
        const cached = this.#o.owned?.(type, cr.metadata.name);
        if (cached !== undefined) return cached;
        try {
          return (
            await this.#o.kube.list(type, {
              labelSelector,
              ...(type.namespaced ? { namespace: this.#o.namespace } : {}),
            })
          ).items;
        } catch (e) {
          if (isNotFound(e)) return []; // a kind this cluster does not serve (any more)
          throw e;
        }
      }),
    );
    return lists.flat();
  }

  /**
   * The certificate Secrets. One that the list (or a cache that has not yet seen our own recent
   * write) lacks is read by name before new certificates are issued: a stale cache must never
   * cause a new CA. Only a Secret labelled as built for this CR counts.
   */
  async #certSecrets(cr: OwnerDeployment, live: readonly KubeObject[]): Promise<ExistingCertSecrets> {
    const names = deploymentObjectNames(cr.metadata.name);
    const secret = async (name: string): Promise<ExistingCertSecrets['ca']> => {
      const listed = live.find((o) => o.kind === RESOURCES.secret.kind && o.metadata.name === name);
      if (listed !== undefined) return listed;
      const read = await this.#o.kube.get<V1Secret & KubeObject>({
        ...RESOURCES.secret,
        name,
        namespace: this.#o.namespace,
      });
      const labels = read?.metadata.labels ?? {};
      return labels[LABEL_KEYS.instance] === cr.metadata.name && labels[LABEL_KEYS.managedBy] === FIELD_MANAGER
        ? read
        : undefined;
    };
    const [ca, registry, node] = await Promise.all([
      secret(names.caSecret),
      secret(names.registrySecret),
      secret(names.nodeSecret),
    ]);
    return { ca, registry, node };
  }

  /**
   * The defaulted spec; with the deployed device mode kept when changing it would orphan volumes.
   * The deployed mode is our node DaemonSet's, else the Go operator's (`goNodeDaemonSet`).
   */
  async #effectiveSpec(
    cr: OwnerDeployment,
    live: readonly KubeObject[],
    goNodeDaemonSet: KubeObject | undefined,
  ): Promise<EffectiveSpec> {
    const spec = withDefaults(cr.spec, { operatorImage: this.#o.operatorImage });
    const dsName = deploymentObjectNames(cr.metadata.name).nodeDaemonSet;
    const deployed = deployedDeviceMode(
      live.find((o) => o.kind === RESOURCES.daemonSet.kind && o.metadata.name === dsName) ?? goNodeDaemonSet,
    );
    if (deployed === undefined || deployed === spec.deviceMode) return { spec };
    const volumes = volumesOfDriver((await this.#o.kube.list(RESOURCES.persistentVolume)).items, cr.metadata.name);
    if (volumes.length === 0) return { spec };
    return {
      spec: { ...spec, deviceMode: deployed },
      refusal: {
        reason: DEPLOY_REASONS.deviceModeRefused,
        message: deviceModeRefusal(deployed, spec.deviceMode, cr.metadata.name, volumes),
      },
    };
  }

  /** Write the status if it changed, and record the events of the transition. */
  async #finish(cr: OwnerDeployment, outcome: ReconcileOutcome): Promise<void> {
    const next = nextStatus(cr, outcome, new Date(this.#o.clock.now()));
    if (statusEqual(cr.status, next)) return;
    try {
      await this.#o.kube.patchDeploymentStatus(cr.metadata.name, next);
    } catch (e) {
      if (isNotFound(e)) return; // deleted meanwhile
      throw e;
    }
    for (const event of statusEvents(cr.status, next)) await this.#o.events.record(cr, event);
  }
}
