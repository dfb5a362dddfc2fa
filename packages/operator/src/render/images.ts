// Names of the two container images (deploy/images/driver.Dockerfile and operator.Dockerfile) and
// how a registry and a tag make a full reference. Every install path (the operator's default
// driver image, the Helm chart, the kustomize bases) takes its defaults from here, so that the
// images the manifests reference are the images the Dockerfiles build.
import { OPERATOR_VERSION } from '../version.js';

/** Repository of the driver image (controller and node): deploy/images/driver.Dockerfile. */
export const DRIVER_IMAGE_REPOSITORY = 'pmem-csi-driver';
/** Repository of the operator image: deploy/images/operator.Dockerfile. */
export const OPERATOR_IMAGE_REPOSITORY = 'pmem-csi-operator';

export interface ImageOptions {
  /** Prepended with '/', e.g. "registry.example.com/pmem"; '' or unset = the bare repository. */
  readonly registry?: string;
  /** Unset = the operator version, which is also the chart's appVersion. */
  readonly tag?: string;
}

/** `[registry/]repository:tag`. */
export function imageReference(repository: string, options: ImageOptions = {}): string {
  const registry = (options.registry ?? '').replace(/\/+$/, '');
  return `${registry === '' ? '' : `${registry}/`}${repository}:${options.tag ?? OPERATOR_VERSION}`;
}

/** The driver image of this version, without a registry. */
export const DEFAULT_DRIVER_IMAGE = imageReference(DRIVER_IMAGE_REPOSITORY);
/** The operator image of this version, without a registry. */
export const DEFAULT_OPERATOR_IMAGE = imageReference(OPERATOR_IMAGE_REPOSITORY);
