// PmemCSIDeployment API types, defaults, validation, names and volume parameters (pure, no I/O).
// Everything public of @pmem-csi/api is exported here; other packages import nothing deeper.
export type * from './generated/pmemcsideployment.js';
export * from './identity.js';
export * from './crd/values.js';
export type { JSONSchemaProps, JSONSchemaType, JSONValue } from './crd/json-schema.js';
export { pmemCsiDeploymentSchema } from './crd/schema.js';
export {
  pmemCsiDeploymentCrd,
  printerColumns,
  type CustomResourceDefinition,
  type PrinterColumn,
} from './crd/definition.js';
export * from './defaults.js';
export * from './validate.js';
export { isDnsSubdomain, isImageReference, isLabelKey, isLabelValue } from './validation/syntax.js';
export * from './conditions.js';
export * from './status.js';
export * from './names.js';
export * from './volume-id.js';
export * from './parameters.js';
export * from './device-modes.js';
export * from './quantity.js';
