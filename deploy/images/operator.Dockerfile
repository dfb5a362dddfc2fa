# syntax=docker/dockerfile:1
# The PMEM-CSI operator image, pmem-csi-operator:<version>. It talks only to the Kubernetes API:
# no host tools, no shell, non-root (uid 65532, as the Helm chart and kustomize base expect).
#   docker build -f deploy/images/operator.Dockerfile -t pmem-csi-operator:0.1.0 .  (repository root)
ARG NODE_IMAGE=node:20-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs20-debian12:nonroot

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund \
 && npx tsc -b packages/operator/tsconfig.lib.json \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${RUNTIME_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="pmem-csi-operator" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.description="PMEM-CSI operator: deploys and upgrades PMEM-CSI drivers from PmemCSIDeployments" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages/api/package.json ./packages/api/
COPY --from=build /app/packages/api/dist ./packages/api/dist
COPY --from=build /app/packages/runtime/package.json ./packages/runtime/
COPY --from=build /app/packages/runtime/dist ./packages/runtime/dist
COPY --from=build /app/packages/operator/package.json ./packages/operator/
COPY --from=build /app/packages/operator/dist ./packages/operator/dist
ENV NODE_ENV=production
USER 65532:65532
ENTRYPOINT ["/nodejs/bin/node", "/app/packages/operator/dist/main.js"]
