// The complete apiextensions.k8s.io/v1 CustomResourceDefinition of PmemCSIDeployment, as a plain
// object. tools/gen-crd.ts writes it to deploy/crd as YAML; tests and installers can also use the
// object directly, so the YAML is never hand-edited.
import { API_GROUP, API_VERSION, CRD_NAME, KIND, LIST_KIND, PLURAL, SHORT_NAMES, SINGULAR } from '../identity.js';
import type { JSONSchemaProps } from './json-schema.js';
import { pmemCsiDeploymentSchema } from './schema.js';

export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
}

export interface CustomResourceDefinition {
  readonly apiVersion: 'apiextensions.k8s.io/v1';
  readonly kind: 'CustomResourceDefinition';
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly group: string;
    readonly scope: 'Cluster' | 'Namespaced';
    readonly names: {
      readonly kind: string;
      readonly listKind: string;
      readonly plural: string;
      readonly singular: string;
      readonly shortNames: readonly string[];
    };
    readonly versions: readonly {
      readonly name: string;
      readonly served: boolean;
      readonly storage: boolean;
      readonly subresources: { readonly status: Record<string, never> };
      readonly additionalPrinterColumns: readonly PrinterColumn[];
      readonly schema: { readonly openAPIV3Schema: JSONSchemaProps };
    }[];
  };
}

export const printerColumns: readonly PrinterColumn[] = [
  {
    name: 'DeviceMode',
    type: 'string',
    jsonPath: '.spec.deviceMode',
    description: 'lvm or direct (PMEM), or emulated (loop-backed files, not PMEM)',
  },
  {
    name: 'NodeSelector',
    type: 'string',
    jsonPath: '.spec.nodeSelector',
    description: 'Nodes that run the node driver',
  },
  { name: 'Image', type: 'string', jsonPath: '.spec.image', description: "Driver image (empty: the operator's image)" },
  { name: 'Status', type: 'string', jsonPath: '.status.phase', description: 'Running or Failed' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

/** The CRD object. The driver objects it describes are cluster-wide, so the resource is too. */
export const pmemCsiDeploymentCrd: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: CRD_NAME },
  spec: {
    group: API_GROUP,
    scope: 'Cluster',
    names: { kind: KIND, listKind: LIST_KIND, plural: PLURAL, singular: SINGULAR, shortNames: SHORT_NAMES },
    versions: [
      {
        name: API_VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: printerColumns,
        schema: { openAPIV3Schema: pmemCsiDeploymentSchema },
      },
    ],
  },
};
