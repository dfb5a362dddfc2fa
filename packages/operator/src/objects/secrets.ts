// The certificate Secrets. All three are type kubernetes.io/tls (tls.crt + tls.key, plus ca.crt,
// the layout cert-manager uses), so tools recognise them:
// - <prefix>-registry-secrets: mounted by the controller (identity pmem-registry);
// - <prefix>-node-secrets: mounted by the node pods (identity pmem-node-controller);
// - <prefix>-ca: the operator's CA certificate (tls.crt) and key (tls.key), kept so that
//   certificates can be renewed (the Go operator discarded the key), and ca.crt, the bundle of
//   trusted CAs. Not built when the user supplies certificates.
// ca.crt of every Secret is the trust bundle: during a CA rotation it holds old and new CA.
// A Secret's type is immutable, so one of another type (e.g. Opaque) is recreated.
import type { V1Secret } from '@kubernetes/client-node';
import { SECRET_KEYS, deploymentObjectNames, type DriverComponentLabel } from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import { RESOURCES } from '../kube/resources.js';
import type { Built, BuildContext, OwnerDeployment, TlsMaterial } from './context.js';
import { objectMeta } from './meta.js';

export const TLS_SECRET_TYPE = 'kubernetes.io/tls';

const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

function tlsSecret(
  cr: OwnerDeployment,
  ctx: BuildContext,
  secret: { name: string; material: TlsMaterial; component?: DriverComponentLabel },
): Built<V1Secret> {
  const { name, material, component } = secret;
  return {
    apiVersion: RESOURCES.secret.apiVersion,
    kind: RESOURCES.secret.kind,
    metadata: objectMeta(cr, ctx, { name, namespaced: true, ...(component === undefined ? {} : { component }) }),
    type: TLS_SECRET_TYPE,
    data: {
      [SECRET_KEYS.caCert]: base64(material.caBundlePem),
      [SECRET_KEYS.cert]: base64(material.certPem),
      [SECRET_KEYS.key]: base64(material.keyPem),
    },
  };
}

export function buildRegistrySecret(cr: OwnerDeployment, ctx: BuildContext): Built<V1Secret> {
  return tlsSecret(cr, ctx, {
    name: deploymentObjectNames(cr.metadata.name).registrySecret,
    material: ctx.certs.registry,
    component: 'controller',
  });
}

export function buildNodeSecret(cr: OwnerDeployment, ctx: BuildContext): Built<V1Secret> {
  return tlsSecret(cr, ctx, {
    name: deploymentObjectNames(cr.metadata.name).nodeSecret,
    material: ctx.certs.node,
    component: 'node',
  });
}

export function buildCaSecret(cr: OwnerDeployment, ctx: BuildContext): Built<V1Secret> {
  const { ca } = ctx.certs;
  return ca === undefined
    ? null
    : tlsSecret(cr, ctx, { name: deploymentObjectNames(cr.metadata.name).caSecret, material: ca });
}

/** The type of a Secret is immutable. */
export function secretMustRecreate(live: KubeObject, desired: KubeObject): boolean {
  return ((live as V1Secret).type ?? 'Opaque') !== (desired as V1Secret).type;
}

/** The PEM texts of a TLS Secret as read from the apiserver (undefined for missing keys). */
export function readTlsSecret(secret: V1Secret | undefined): Partial<TlsMaterial> {
  const get = (key: string): string | undefined => {
    const value = secret?.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  };
  return { caBundlePem: get(SECRET_KEYS.caCert), certPem: get(SECRET_KEYS.cert), keyPem: get(SECRET_KEYS.key) };
}
