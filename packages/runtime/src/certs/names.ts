// The identities of the controller<->node mutual TLS. They are DNS subject alternative names, the
// only part of a certificate the driver trusts for identity (never the subject CommonName). They
// are API: certificates issued by the Go driver's operator carry the same names.

/** DNS SAN of the controller's registry service (server on TCP 10000, client of node-controllers). */
export const REGISTRY_IDENTITY = 'pmem-registry';

/** DNS SAN of the node-controller service of every node (server on TCP 10001, client of the registry). */
export const NODE_CONTROLLER_IDENTITY = 'pmem-node-controller';
