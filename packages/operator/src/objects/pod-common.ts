// Pieces shared by the controller and node pod templates: resource conversion, hardened container
// security, the driver's configuration common to both modes (rendered as arguments by the flag schema of @pmem-csi/csi),
// the driver's V8 options per mode (NODE_OPTIONS), and the config-hash annotation that rolls pods
// when their Secret's certificates change.
import type {
  V1Container,
  V1EnvVar,
  V1PodTemplateSpec,
  V1ResourceRequirements,
  V1SecurityContext,
} from '@kubernetes/client-node';
import { SECRET_KEYS, type ResourceRequirements } from '@pmem-csi/api';
import { CERTS_MOUNT_PATH, CONFIG_HASH_ANNOTATION } from '@pmem-csi/api';
import { driverNodeOptions, type ControllerConfig, type DriverMode } from '@pmem-csi/csi';
import type { BuildContext, TlsMaterial } from './context.js';
import type { KubeObject } from '../kube/kube-port.js';
import { canonicalJson, contentHash } from './hash.js';

/** Volume name of the mounted TLS Secret in both pods. */
export const CERTS_VOLUME = 'certs';

/** Spec quantities may be numbers; the pod API wants strings. */
export function podResources(resources: ResourceRequirements): V1ResourceRequirements {
  const strings = (map: Record<string, number | string> | undefined): Record<string, string> | undefined =>
    map === undefined ? undefined : Object.fromEntries(Object.entries(map).map(([k, v]) => [k, String(v)]));
  const limits = strings(resources.limits);
  const requests = strings(resources.requests);
  return { ...(limits === undefined ? {} : { limits }), ...(requests === undefined ? {} : { requests }) };
}

/** Unprivileged containers: no privilege escalation, no capabilities, read-only root (a fresh object each call). */
export function restrictedContainer(): V1SecurityContext {
  return { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } };
}

/** The driver's configuration common to both modes (rendered by @pmem-csi/csi renderDriverArgs). */
export function commonDriverConfig(
  ctx: BuildContext,
  driverName: string,
  endpoint: string,
): Pick<
  ControllerConfig,
  'driverName' | 'csiEndpoint' | 'caFile' | 'certFile' | 'keyFile' | 'logFormat' | 'verbosity'
> {
  return {
    driverName,
    csiEndpoint: endpoint,
    caFile: `${CERTS_MOUNT_PATH}/${SECRET_KEYS.caCert}`,
    certFile: `${CERTS_MOUNT_PATH}/${SECRET_KEYS.cert}`,
    keyFile: `${CERTS_MOUNT_PATH}/${SECRET_KEYS.key}`,
    logFormat: ctx.spec.logFormat,
    verbosity: ctx.spec.logLevel,
  };
}

/** The driver container's common parts: image, pull policy, certificate mount. */
export function driverContainerBase(
  ctx: BuildContext,
): Pick<V1Container, 'image' | 'imagePullPolicy' | 'terminationMessagePolicy'> {
  return {
    image: ctx.spec.image,
    imagePullPolicy: ctx.spec.imagePullPolicy,
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}

/**
 * The driver container's NODE_OPTIONS: the V8 heap limits of its mode (@pmem-csi/csi
 * DRIVER_V8_OPTIONS), none when the mode has none. The pod carries them, not the image: the
 * controller and the node run the same image and entrypoint, and only the pod knows its mode;
 * NODE_OPTIONS also reaches the node whatever path an image (a pinned older one too) starts it by.
 */
export function driverRuntimeEnv(mode: DriverMode): V1EnvVar[] {
  const options = driverNodeOptions(mode);
  return options === '' ? [] : [{ name: 'NODE_OPTIONS', value: options }];
}

export const certsMount = { name: CERTS_VOLUME, mountPath: CERTS_MOUNT_PATH, readOnly: true };

export function certsVolume(secretName: string): { name: string; secret: { secretName: string; defaultMode: number } } {
  return { name: CERTS_VOLUME, secret: { secretName, defaultMode: 0o400 } };
}

/**
 * The template with CONFIG_HASH_ANNOTATION set to a hash of the template itself and of the
 * certificates its Secret holds: Secret content is invisible in the template, yet a rotation must
 * reach every pod even where the driver did not reload from disk.
 */
export function withConfigHash(template: V1PodTemplateSpec, tls: TlsMaterial): V1PodTemplateSpec {
  const hash = contentHash(template, { ca: tls.caBundlePem, cert: tls.certPem });
  const metadata = template.metadata ?? {};
  return {
    ...template,
    metadata: { ...metadata, annotations: { ...metadata.annotations, [CONFIG_HASH_ANNOTATION]: hash } },
  };
}

/** spec.selector of Deployments and DaemonSets is immutable: another selector means recreate. */
export function selectorMustRecreate(live: KubeObject, desired: KubeObject): boolean {
  const selector = (o: KubeObject): string =>
    canonicalJson((o as { spec?: { selector?: unknown } }).spec?.selector ?? null);
  return selector(live) !== selector(desired);
}
