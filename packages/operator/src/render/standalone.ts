// The driver without the operator: the very objects the operator builds for a spec (same builders,
// same names), turned into plain manifests for kustomize. With no custom resource and no operator:
// - owner references are removed (they would point at a CR that does not exist, and the garbage
//   collector deletes objects whose owner is missing);
// - app.kubernetes.io/managed-by says "kustomize", so a later operator's informers (which select
//   managed-by=pmem-csi-operator) do not treat them as built by an operator;
// - the operator-version annotation and the pods' config-hash annotation go (no operator built
//   them; the hash would be of placeholder certificates);
// - the certificate Secrets are not included: the user creates them (deploy/tools/make-certs.ts),
//   under the names the pods mount (deploymentObjectNames(...).registrySecret / nodeSecret).
import {
  API_GROUP_VERSION,
  DEFAULT_DRIVER_NAME,
  KIND,
  LABEL_KEYS,
  withDefaults,
  type PmemCSIDeploymentSpec,
} from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import { CONFIG_HASH_ANNOTATION, OPERATOR_VERSION_ANNOTATION } from '@pmem-csi/api';
import type { BuildContext, OwnerDeployment, TlsMaterial } from '../objects/context.js';
import { buildDesiredObjects } from '../objects/registry.js';
import { RESOURCES } from '../kube/resources.js';
import { OPERATOR_VERSION } from '../version.js';
import { DEFAULT_DRIVER_IMAGE } from './images.js';

/** managed-by of objects installed without the operator. */
export const STANDALONE_MANAGED_BY = 'kustomize';

export interface StandaloneOptions {
  readonly spec: PmemCSIDeploymentSpec;
  readonly namespace: string;
  /** The CR name the objects are named after (= CSI driver name). */
  readonly driverName?: string;
  /** The driver image when the spec does not set one (what an operator would default it to). */
  readonly defaultImage?: string;
}

const NO_TLS: TlsMaterial = { caBundlePem: '', certPem: '', keyPem: '' };

/** The CR the operator would see for `options`, with a placeholder uid. */
export function standaloneDeployment(options: StandaloneOptions): OwnerDeployment {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: KIND,
    metadata: { name: options.driverName ?? DEFAULT_DRIVER_NAME, uid: '' },
    spec: structuredClone(options.spec),
  };
}

/** The build context the operator would use, without certificates. */
export function standaloneContext(options: StandaloneOptions): BuildContext {
  return {
    namespace: options.namespace,
    operatorVersion: OPERATOR_VERSION,
    spec: withDefaults(options.spec, { operatorImage: options.defaultImage ?? DEFAULT_DRIVER_IMAGE }),
    certs: { registry: NO_TLS, node: NO_TLS },
  };
}

type Annotated = { metadata?: { annotations?: Record<string, string> } };

function withoutAnnotation<T extends Annotated>(holder: T, key: string): void {
  const annotations = holder.metadata?.annotations;
  if (annotations === undefined || holder.metadata === undefined) return;
  delete annotations[key];
  if (Object.keys(annotations).length === 0) delete holder.metadata.annotations;
}

/**
 * An object the operator built, as a manifest installed without it: no owner references, no
 * operator annotations, managed-by `managedBy`. Also used to compare the operator's output with
 * the manifests (e2e agreement test).
 */
export function toStandalone(object: KubeObject, managedBy: string = STANDALONE_MANAGED_BY): KubeObject {
  const copy = structuredClone(object);
  delete copy.metadata.ownerReferences;
  withoutAnnotation(copy, OPERATOR_VERSION_ANNOTATION);
  if (copy.metadata.labels?.[LABEL_KEYS.managedBy] !== undefined)
    copy.metadata.labels[LABEL_KEYS.managedBy] = managedBy;
  const template = (copy as { spec?: { template?: Annotated } }).spec?.template;
  if (template !== undefined) withoutAnnotation(template, CONFIG_HASH_ANNOTATION);
  return copy;
}

/** Every object of the driver for `options` except the certificate Secrets, in apply order. */
export function standaloneDriverObjects(options: StandaloneOptions): KubeObject[] {
  const cr = standaloneDeployment(options);
  return buildDesiredObjects(cr, standaloneContext(options))
    .filter(({ object }) => object.kind !== RESOURCES.secret.kind)
    .map(({ object }) => toStandalone(object));
}
