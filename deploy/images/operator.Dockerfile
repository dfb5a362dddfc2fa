# syntax=docker/dockerfile:1
# The PMEM-CSI operator image, pmem-csi-operator:<version>. It talks only to the Kubernetes API:
# no host tools, no shell, non-root (uid 65532, as the Helm chart and kustomize base expect).
#   docker build -f deploy/images/operator.Dockerfile -t pmem-csi-operator:0.1.0 .  (repository root)
ARG NODE_IMAGE=node:24-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian12:nonroot
# The image's version: its tag, its label and the operator's version (the default of --version,
# recorded on every object it builds); the build stage writes it into the sources it compiles.
ARG VERSION=0.1.0

# The version is declared after `npm ci` so that builds of the same sources with different versions
# share that layer (a build cache keys every RUN after an ARG on the ARG's value).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY . .
# npm 10 can end `npm ci` with "Exit handler never called!" and exit status 0 having installed
# nothing (seen here under load); such a layer would be cached and every later build would fail at
# `npx tsc`. The step checks its result (the compiler is there) and tries once more.
RUN { npm ci --no-audit --no-fund && test -x node_modules/.bin/tsc; } \
 || { echo "npm ci left no node_modules/.bin/tsc: running it once more" >&2; \
      npm ci --no-audit --no-fund && test -x node_modules/.bin/tsc; }
ARG VERSION
RUN echo "$VERSION" | grep -Eqx '[A-Za-z0-9][A-Za-z0-9._-]{0,127}' \
   || { echo "VERSION=$VERSION: an image tag is letters, digits, '.', '_', '-'" >&2; exit 1; } \
 && sed -i "s/^export const DRIVER_VERSION = '[^']*';\$/export const DRIVER_VERSION = '$VERSION';/" packages/csi/src/version.ts \
 && grep -qx "export const DRIVER_VERSION = '$VERSION';" packages/csi/src/version.ts \
 && npx tsc -b packages/operator/tsconfig.lib.json \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${RUNTIME_IMAGE}
ARG VERSION
LABEL org.opencontainers.image.title="pmem-csi-operator" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.description="PMEM-CSI operator: deploys and upgrades PMEM-CSI drivers from PmemCSIDeployments" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages/api/package.json ./packages/api/
COPY --from=build /app/packages/api/dist ./packages/api/dist
COPY --from=build /app/packages/csi/package.json ./packages/csi/
COPY --from=build /app/packages/csi/dist ./packages/csi/dist
COPY --from=build /app/packages/runtime/package.json ./packages/runtime/
COPY --from=build /app/packages/runtime/dist ./packages/runtime/dist
COPY --from=build /app/packages/operator/package.json ./packages/operator/
COPY --from=build /app/packages/operator/dist ./packages/operator/dist
ENV NODE_ENV=production
USER 65532:65532
ENTRYPOINT ["/nodejs/bin/node", "/app/packages/operator/dist/main.js"]
