// What every builder gets besides the custom resource: the defaulted spec, where namespaced
// objects go, the operator version and the certificate material. Builders are pure functions of
// (cr, context), so the same inputs always give byte-identical objects (golden-tested).
import type { V1NodeSelectorTerm } from '@kubernetes/client-node';
import type { DefaultedSpec, ObjectMeta, PmemCSIDeployment } from '@pmem-csi/api';
import type { KubeObject, LooseObject, ResourceType } from '../kube/kube-port.js';

/** A PmemCSIDeployment as read from the apiserver: name and uid are always set. */
export type OwnerDeployment = PmemCSIDeployment & { metadata: ObjectMeta & { name: string; uid: string } };

/** ca.crt, tls.crt and tls.key of one TLS Secret, as PEM text. */
export interface TlsMaterial {
  readonly caBundlePem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/** Contents of the certificate Secrets; `ca` only when the operator runs its own CA. */
export interface CertificateSecrets {
  readonly registry: TlsMaterial;
  readonly node: TlsMaterial;
  readonly ca?: TlsMaterial;
}

export interface BuildContext {
  /** Namespace of all namespaced objects (the operator's, not the CR's: the CR is cluster-scoped). */
  readonly namespace: string;
  readonly operatorVersion: string;
  /** The CR spec with every default applied (and, when refused, the deployed device mode kept). */
  readonly spec: DefaultedSpec;
  readonly certs: CertificateSecrets;
  /**
   * Required node affinity terms (ORed, ANDed with the node selector) that keep the node DaemonSet
   * off the nodes of earlier PMEM-managing deployments (plan/pmem-overlap.ts); absent when there is
   * nothing to keep off.
   */
  readonly nodeExclusion?: readonly V1NodeSelectorTerm[];
}

/** A builder kind with `null` meaning "this object is not wanted for this spec". */
export type Built<T> = (T & KubeObject) | null;

/** One entry of the builder registry (see registry.ts). */
export interface ObjectBuilder extends ResourceType {
  /** Stable identifier, e.g. "node-daemonset"; used in logs and tests. */
  readonly id: string;
  build(cr: OwnerDeployment, ctx: BuildContext): KubeObject | null;
  /** True when `live` cannot be changed into `desired` in place (immutable fields): delete, then create. */
  readonly mustRecreate?: (live: KubeObject, desired: KubeObject) => boolean;
  /**
   * A JSON merge patch to send before applying `desired` over `live`, for a change that server-side
   * apply cannot make alone (removing a field no manager owns, such as an apiserver default).
   */
  readonly prepatch?: (live: KubeObject, desired: KubeObject) => LooseObject | undefined;
  /**
   * When recreated, the new object is created only once the old one and its pods are gone
   * (foreground deletion): the node DaemonSet, because two node drivers on one node would serve
   * the same kubelet socket and devices.
   */
  readonly recreateAfterPodsGone?: boolean;
}
