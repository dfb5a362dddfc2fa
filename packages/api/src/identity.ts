// Identity of the PmemCSIDeployment custom resource: group, version, kind and the names the
// apiserver serves it under. These strings are API: existing clusters store objects under them.

export const API_GROUP = 'pmem-csi.intel.com';
export const API_VERSION = 'v1beta1';
/** `apiVersion` field value of every PmemCSIDeployment object. */
export const API_GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;
export const KIND = 'PmemCSIDeployment';
export const LIST_KIND = 'PmemCSIDeploymentList';
export const PLURAL = 'pmemcsideployments';
export const SINGULAR = 'pmemcsideployment';
export const SHORT_NAMES: readonly string[] = ['pcd'];
/** metadata.name of the CustomResourceDefinition (`<plural>.<group>`). */
export const CRD_NAME = `${PLURAL}.${API_GROUP}`;
