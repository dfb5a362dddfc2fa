// TEMPORARY: names the operator needs that @pmem-csi/api (names.ts) does not export yet. They are
// kept in this one file, clearly apart, so that moving them into the api package is a rename of
// imports only. Requested from the api owners; do not add names anywhere else in the operator.
import { API_GROUP } from '@pmem-csi/api';

/** TEMPORARY (api): annotation on every built object with the operator version that built it. */
export const OPERATOR_VERSION_ANNOTATION = `${API_GROUP}/operator-version`;

/** TEMPORARY (api): pod-template annotation, hash of the template's inputs (spec + certificate fingerprints). */
export const CONFIG_HASH_ANNOTATION = `${API_GROUP}/config-hash`;

/** TEMPORARY (api): annotation on the node DaemonSet recording the device mode it runs with. */
export const DEVICE_MODE_ANNOTATION = `${API_GROUP}/device-mode`;

/** TEMPORARY (api): Lease (in the operator's namespace) for leader election between operator replicas. */
export const OPERATOR_LEASE_NAME = 'pmem-csi-operator';

/**
 * TEMPORARY (api): namespace of the core/v1 Events about the cluster-scoped PmemCSIDeployment.
 * Kubernetes' own event recorder files events of cluster-scoped objects under "default".
 */
export const CLUSTER_EVENT_NAMESPACE = 'default';

/** TEMPORARY (api): reporting component of the operator's Events. */
export const EVENT_SOURCE_COMPONENT = 'pmem-csi-operator';

/** TEMPORARY (api): container names inside the driver pods (stable: logs and probes refer to them). */
export const CONTAINER_NAMES = {
  driver: 'pmem-driver',
  provisioner: 'external-provisioner',
  registrar: 'driver-registrar',
} as const;

/** TEMPORARY (api): where the driver containers mount their TLS Secret. */
export const CERTS_MOUNT_PATH = '/certs';

/** TEMPORARY (api): HTTP health port of node-driver-registrar (`--http-endpoint`). */
export const REGISTRAR_HEALTH_PORT = 9809;
