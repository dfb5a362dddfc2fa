// Syntax of the Kubernetes and OCI strings that a PmemCSIDeployment contains: DNS subdomains,
// label keys and values, container image references, absolute paths. Regular expressions follow
// k8s.io/apimachinery validation and distribution/reference, so that what we accept the
// apiserver and the container runtime accept too.

const DNS_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS_SUBDOMAIN_RE = new RegExp(`^${DNS_LABEL}(\\.${DNS_LABEL})*$`);
const QUALIFIED_NAME_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export const DNS_SUBDOMAIN_MAX_LENGTH = 253;
export const LABEL_NAME_MAX_LENGTH = 63;

export function isDnsSubdomain(value: string): boolean {
  return value.length <= DNS_SUBDOMAIN_MAX_LENGTH && DNS_SUBDOMAIN_RE.test(value);
}

/** `[prefix/]name`: name ≤ 63 alphanumerics, '-', '_', '.'; prefix a DNS subdomain. */
export function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  return (
    (prefix === undefined || isDnsSubdomain(prefix)) &&
    name.length <= LABEL_NAME_MAX_LENGTH &&
    QUALIFIED_NAME_RE.test(name)
  );
}

/** Empty, or ≤ 63 alphanumerics, '-', '_', '.' starting and ending with an alphanumeric. */
export function isLabelValue(value: string): boolean {
  return value.length <= LABEL_NAME_MAX_LENGTH && LABEL_VALUE_RE.test(value);
}

// distribution/reference grammar: [domain[:port]/]path[:tag][@digest].
const ALNUM = '[a-z0-9]+';
const PATH_COMPONENT = `${ALNUM}(?:(?:[._]|__|-+)${ALNUM})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const NAME = `(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const IMAGE_RE = new RegExp(`^(${NAME})(?::${TAG})?(?:@${DIGEST})?$`);
const MAX_IMAGE_NAME_LENGTH = 255;

export const IMAGE_REFERENCE_SYNTAX =
  '[registry[:port]/]repository[:tag][@digest], lowercase repository, no whitespace';

export function isImageReference(value: string): boolean {
  const match = IMAGE_RE.exec(value);
  return match !== null && (match[1]?.length ?? 0) <= MAX_IMAGE_NAME_LENGTH;
}

/** Absolute, without '.' or '..' segments (which would escape or hide the intended directory). */
export function isCleanAbsolutePath(value: string): boolean {
  return (
    value.startsWith('/') &&
    !value.includes('\0') &&
    !value.split('/').some((segment) => segment === '.' || segment === '..')
  );
}
