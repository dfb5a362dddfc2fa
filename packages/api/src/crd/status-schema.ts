// OpenAPI v3 schema of PmemCSIDeployment.status, written by the operator only. Conditions follow
// the Kubernetes convention (metav1.Condition) and both lists are maps keyed by type/component,
// so that server-side apply merges entries instead of replacing the whole list.
import type { JSONSchemaProps } from './json-schema.js';
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
  "gives the same object names, because the two names differ only in '.' and '-'; the one created first, or for the same second the one first by name, keeps running untouched), " +
  'OwnedByOtherDeployment and OwnedByOtherController (a live object is controlled by another PmemCSIDeployment or by another controller). ' +
  'The message names the other deployment or controller and the object. To resolve, delete one of the two deployments (to run both ' +
  "drivers, recreate this one under a name that still differs after replacing '.' with '-'), or remove the other controller's object; " +
  'the operator then takes over without further action. False (reason Resolved) once the conflict is gone; absent when there never was one.'

const timestamp = (description: string): JSONSchemaProps => ({ type: 'string', format: 'date-time', description });

const generation = (description: string): JSONSchemaProps => ({ type: 'integer', format: 'int64', minimum: 0, description });

export const conditionSchema: JSONSchemaProps = {
  type: 'object',
  description: 'One aspect of the deployment, in the Kubernetes condition convention.',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: {
      type: 'string',
      enum: CONDITION_TYPES,
      description: [
        'CertsVerified: the user-supplied certificates are valid. CertsReady: the certificate Secrets exist. DriverDeployed: all driver objects are applied and the driver pods are ready.',
        CONFLICT_DESCRIPTION,
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
    message: { type: 'string', maxLength: CONDITION_MESSAGE_MAX_LENGTH, description: 'Human-readable details; may be empty.' },
  },
};

export const driverComponentSchema: JSONSchemaProps = {
  type: 'object',
  description: 'Readiness of one driver workload.',
  required: ['component', 'status'],
  properties: {
    component: { type: 'string', enum: DRIVER_COMPONENTS, description: 'Controller (the Deployment) or Node (the DaemonSet).' },
    status: { type: 'string', enum: DRIVER_COMPONENT_STATES, description: 'Ready when all desired pods are ready.' },
    reason: { type: 'string', description: 'Why, e.g. "3 out of 5 driver pods are ready".' },
    desired: { type: 'integer', format: 'int32', minimum: 0, description: 'Number of pods that should run.' },
    ready: { type: 'integer', format: 'int32', minimum: 0, description: 'Number of pods that are ready.' },
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
      description: 'Empty while the deployment is being set up, Running when every driver pod is ready, Failed when it cannot be deployed (see reason).',
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
