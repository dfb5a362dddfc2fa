// Install manifests from the operator's own builders (one source of truth for the operator, the
// Helm chart and the kustomize bases). Pure; the YAML files themselves are written by
// tools/gen-deploy.ts (render/files.ts, not exported here: it needs the build-time `yaml` package).
export * from './images.js';
export * from './operator-rbac.js';
export * from './operator-install.js';
export * from './standalone.js';
export * from './values-schema.js';
export * from './variants.js';
