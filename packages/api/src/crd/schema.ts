// The openAPIV3Schema of PmemCSIDeployment v1beta1: the one schema source. The CRD YAML in
// deploy/crd and the types in src/generated are generated from it (npx tsx tools/gen-crd.ts).
import type { JSONSchemaProps } from './json-schema.js';
import { specSchema } from './spec-schema.js';
import { statusSchema } from './status-schema.js';
import { DRIVER_NAME_MAX_LENGTH, DRIVER_NAME_PATTERN } from './values.js';

export const pmemCsiDeploymentSchema: JSONSchemaProps = {
  type: 'object',
  description:
    'PmemCSIDeployment deploys one PMEM-CSI driver (controller, node DaemonSet, certificates and RBAC) under the driver name metadata.name. Cluster-scoped.',
  properties: {
    apiVersion: { type: 'string', description: 'APIVersion of this representation of the object.' },
    kind: { type: 'string', description: 'Kind of this object.' },
    // The apiserver owns metadata's schema; a structural schema may restrict only name and
    // generateName. The name becomes the driver name and the prefix of Service names.
    metadata: {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: DRIVER_NAME_MAX_LENGTH, pattern: DRIVER_NAME_PATTERN },
      },
    },
    spec: specSchema,
    status: statusSchema,
  },
};
