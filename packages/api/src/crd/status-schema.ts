// OpenAPI v3 schema of PmemCSIDeployment.status, written by the operator only. Conditions follow
// the Kubernetes convention (metav1.Condition) and both lists are maps keyed by type/component,
// so that server-side apply merges entries instead of replacing the whole list.
import type { JSONSchemaProps } from './json-schema.js';
import { PMEM_OVERLAP_MAX_NODE_SELECTOR_TERMS, PMEM_OVERLAP_RULE } from '../device-modes.js';
import { OBJECT_NAME_OWNERSHIP_RULE } from '../names.js';
import {
  CONDITION_MESSAGE_MAX_LENGTH,
  CONDITION_REASON_MAX_LENGTH,
  CONDITION_REASON_PATTERN,
  CONDITION_STATUSES,
  CONDITION_TYPES,
  DRIVER_COMPONENT_STATES,
  DRIVER_COMPONENTS,
  PHASES,
} from './values.js';

/**
 * What the Conflict condition means and what an administrator does about it. Object names derive
 * from metadata.name with '.' replaced by '-', so e.g. "pmem-csi.intel.com" and
 * "pmem-csi-intel-com" would share every Secret, ServiceAccount, RBAC object, Service, Deployment
 * and DaemonSet.
 */
const CONFLICT_DESCRIPTION =
  'Conflict: True when the operator refused this deployment because objects it would write belong to someone else; ' +
  'nothing of this deployment is written then and the phase is Failed. Reasons: NameCollision (another PmemCSIDeployment ' +
  "gives the same object names, because the two names differ only in '.' and '-'. Ownership rule: " +
  OBJECT_NAME_OWNERSHIP_RULE +
  '. That deployment runs, takes over any of the objects another one already controls and is never refused for the collision; every other one gets NameCollision naming it), ' +
  'OwnedByOtherDeployment and OwnedByOtherController (a live object is controlled by another PmemCSIDeployment, e.g. a deleted one whose objects the garbage collector has not removed yet, or by another controller), ' +
  "GoOperatorNamespace (the Go operator of PMEM-CSI v1.x made this deployment's objects in another namespace than the operator's: its node driver would run beside ours; run the operator in that namespace). " +
  'The message names the other deployment or controller and the object. To resolve, delete one of the two deployments (to run both ' +
  "drivers, recreate this one under a name that still differs after replacing '.' with '-'), or remove the other controller's object; " +
  'the operator then takes over without further action. False (reason Resolved) once the conflict is gone; absent when there never was one.';

/**
 * What the PmemOverlap condition means: one node driver per node's PMEM (issue 32). The operator
 * (plan/pmem-overlap.ts) keeps the later deployment's node DaemonSet off the shared nodes.
 */
const PMEM_OVERLAP_DESCRIPTION =
  `PmemOverlap: one driver per node's PMEM: ${PMEM_OVERLAP_RULE}. ` +
  'True (NodesExcluded) on a deployment in lvm or direct mode when an earlier one in lvm or direct mode has a node selector that can match the same nodes ' +
  '(the two selectors do not require different values for any common key): its node DaemonSet gets a required node affinity that keeps it off every node an earlier node selector matches, ' +
  'and the message names the earlier deployments, how many nodes it is kept off now and the first of them by name. It takes those nodes over once the earlier deployment is deleted ' +
  '(its node pods restart with the new affinity); the earlier deployment is never kept off. ' +
  `True (TooManyExclusionTerms) when that affinity would need more than ${PMEM_OVERLAP_MAX_NODE_SELECTOR_TERMS} node selector terms (an earlier node selector with n labels this one lacks takes n terms, several earlier ones multiply): ` +
  'the node driver then runs on no node and the phase is Failed. To run both on separate nodes, give the deployments disjoint node selectors (the same key with different values, ' +
  'e.g. storage=pmem-a and storage=pmem-b) and label each node for one of them. False (NoOverlap) once no earlier deployment overlaps; absent when there never was one. ' +
  'Deployments in emulated mode manage no PMEM: they neither keep others off nor are kept off.';

/** What the EmulatedPmem condition means: the driver provides volumes that are not persistent memory. */
const EMULATED_PMEM_DESCRIPTION =
  "EmulatedPmem: True (LoopBackedFiles) while the driver runs in emulated device mode: volumes are sparse files in /var/lib/<driver name>/emulated on each node's disk, " +
  'attached to loop devices; they are NOT persistent memory (no DAX, disk speed and durability); the message gives the capacity per node. ' +
  'A notice, not an error: the driver works. False (PmemDeviceMode) once the driver runs in lvm or direct mode again; absent when it never ran emulated.';

/** What the GoOperatorFields condition means: the Go operator's spec fields, each accepted or refused. */
const GO_OPERATOR_FIELDS_DESCRIPTION =
  'GoOperatorFields: present once the spec carried a field of the Go operator (PMEM-CSI v1.x) that this driver has no counterpart for: controllerTLSSecret, mutatePods, schedulerNodePort. ' +
  'True (Accepted) when every such value means what this driver does anyway (controllerTLSSecret "", mutatePods Try or Never, schedulerNodePort 0); ' +
  "True (Refused) when one needs the Go driver's scheduler extender or pod webhook, which this driver does not have: the message names each field, its value and what to do, and the deployment is Failed (DriverDeployed False, InvalidSpec) with nothing written. " +
  'False (NotSet) once the spec carries none of them any more; absent when it never did.';

const timestamp = (description: string): JSONSchemaProps => ({ type: 'string', format: 'date-time', description });

const generation = (description: string): JSONSchemaProps => ({
  type: 'integer',
  format: 'int64',
  minimum: 0,
  description,
});

export const conditionSchema: JSONSchemaProps = {
  type: 'object',
  description: 'One aspect of the deployment, in the Kubernetes condition convention.',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: {
      type: 'string',
      enum: CONDITION_TYPES,
      description: [
        'DriverDeployed: True (AllObjectsApplied) when every driver object of the current generation is applied; it says nothing about pods, whose readiness is reported by driverComponents and the phase. ' +
          'False when the spec could not be applied as written: InvalidSpec, CertificatesInvalid, ApplyFailed, DeviceModeChangeRefused (everything else applied, the deployed device mode kept), ' +
          'TooManyExclusionTerms (everything applied, the node driver on no node: see PmemOverlap), Conflict.',
        'CertsReady: True when the certificate Secrets were applied with valid certificates (OperatorIssued: issued and renewed by the operator; UserSupplied: from the spec, the message says when they expire); False (CertificatesNotVerified) when the certificates in the spec failed verification.',
        'CertsVerified: present only when the spec carries user-supplied certificates; True when they were verified (chain, names, a TLS handshake), False with what is wrong.',
        'NodesSelected: True when the node driver DaemonSet schedules at least one pod; False (NoMatchingNodes) when no node matches spec.nodeSelector (apart from the nodes kept for earlier PMEM-managing deployments, see PmemOverlap) or every matching node has taints the driver does not tolerate: label the nodes with PMEM or change spec.nodeSelector.',
        CONFLICT_DESCRIPTION,
        PMEM_OVERLAP_DESCRIPTION,
        EMULATED_PMEM_DESCRIPTION,
        GO_OPERATOR_FIELDS_DESCRIPTION,
      ].join(' '),
    },
    status: { type: 'string', enum: CONDITION_STATUSES, description: 'True, False or Unknown.' },
    observedGeneration: generation('metadata.generation of the deployment that this condition describes.'),
    lastTransitionTime: timestamp('When status last changed (RFC 3339).'),
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: CONDITION_REASON_MAX_LENGTH,
      pattern: CONDITION_REASON_PATTERN,
      description: 'Machine-readable CamelCase reason of the last transition.',
    },
    message: {
      type: 'string',
      maxLength: CONDITION_MESSAGE_MAX_LENGTH,
      description: 'Human-readable details; may be empty.',
    },
  },
};

export const driverComponentSchema: JSONSchemaProps = {
  type: 'object',
  description:
    'Readiness of one driver workload as its workload controller last reported it; written by every reconcile that read the workloads, removed when a reconcile fails before that (phase Failed).',
  required: ['component', 'status'],
  properties: {
    component: {
      type: 'string',
      enum: DRIVER_COMPONENTS,
      description: 'Controller (the Deployment) or Node (the DaemonSet).',
    },
    status: {
      type: 'string',
      enum: DRIVER_COMPONENT_STATES,
      description:
        'Ready when the workload controller observed the latest spec and every desired pod is ready and updated (Node: at least one pod).',
    },
    reason: { type: 'string', description: 'Why, e.g. "3 out of 5 driver pods are ready".' },
    desired: { type: 'integer', format: 'int32', minimum: 0, description: 'Number of pods that should run.' },
    ready: { type: 'integer', format: 'int32', minimum: 0, description: 'Number of pods that are ready.' },
    active: {
      type: 'string',
      description:
        "Controller only: the pod that provisions, i.e. whose external-provisioner holds the leader-election Lease (named after the driver, '.' and '/' replaced by '-'); " +
        'the other controller pods stand by with the whole node registry. Absent while no pod holds an unexpired Lease (e.g. during a failover) or no controller pod is ready. ' +
        'The pod that grows volumes is activeResizer.',
    },
    activeResizer: {
      type: 'string',
      description:
        "Controller only: the pod that grows volumes, i.e. whose external-resizer holds its leader-election Lease (the provisioner's Lease name prefixed with 'external-resizer-'). " +
        'Each sidecar elects on its own, so this can be another pod than active. Absent while no pod holds an unexpired resizer Lease (e.g. during a failover) or no controller pod is ready.',
    },
    lastUpdated: timestamp('When this entry was last computed (RFC 3339).'),
  },
};

export const statusSchema: JSONSchemaProps = {
  type: 'object',
  description: 'Observed state, written by the operator.',
  properties: {
    phase: {
      type: 'string',
      enum: PHASES,
      description:
        'Running is entered when every driver pod is ready and updated, and kept while at least one controller pod and one node driver pod are ready ' +
        '(a node joining or a node driver rollout does not leave it; driverComponents show the counts); it is left when no controller pod or no node driver pod is ready. ' +
        'Empty while the driver objects are applied but the driver does not run (yet): reason says what it waits for, e.g. no node matching the node selector. ' +
        'Failed when the spec could not be applied (DriverDeployed False says why).',
    },
    reason: { type: 'string', description: 'Why the deployment is in this phase.' },
    conditions: {
      type: 'array',
      description: 'Conditions, at most one per type.',
      items: conditionSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
    driverComponents: {
      type: 'array',
      description: 'Readiness of the controller and the node driver, at most one entry per component.',
      items: driverComponentSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['component'],
    },
    observedGeneration: generation('metadata.generation of the spec that the operator last reconciled.'),
    lastUpdated: timestamp('When the operator last wrote this status (RFC 3339).'),
  },
};
