# syntax=docker/dockerfile:1
# The PMEM-CSI driver image, pmem-csi-driver:<version>: one binary for the controller Deployment
# (--mode controller) and the node DaemonSet (--mode node). See deploy/images/README.md.
#   docker build -f deploy/images/driver.Dockerfile -t pmem-csi-driver:0.1.0 .      (repository root)
ARG NODE_IMAGE=node:20-bookworm-slim

# Build: every workspace dependency, then one bundle of the driver with its npm dependencies inside
# (tools/bundle.mjs: a few ES modules, each device mode's code in its own chunk), checked by
# running it; the runtime stage needs no node_modules and starts without resolving ~400 modules.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund \
 && node tools/bundle.mjs \
 && node packages/driver/dist/bundle/pmem-csi-driver.mjs --help >/dev/null

FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="pmem-csi-driver" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.description="PMEM-CSI driver: CSI controller and node service for persistent memory" \
      org.opencontainers.image.licenses="Apache-2.0"
# The host tools the node driver runs (nodeTools() in packages/node/src/node-tools.ts, Debian
# packages as TOOL_PACKAGES in packages/runtime/src/exec.ts names them); a test checks that this
# line installs every one of them.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ndctl lvm2 e2fsprogs xfsprogs util-linux mount coreutils \
 && rm -rf /var/lib/apt/lists/*
# LVM in a container: there is no udev daemon to wait for (udev_sync/udev_rules would hang or warn
# on every lvcreate) and no dmeventd (monitoring). The build fails if lvm.conf changed shape.
RUN sed -i \
      -e 's/^\([[:space:]]*\)#\?[[:space:]]*udev_sync = 1/\1udev_sync = 0/' \
      -e 's/^\([[:space:]]*\)#\?[[:space:]]*udev_rules = 1/\1udev_rules = 0/' \
      -e 's/^\([[:space:]]*\)#\?[[:space:]]*monitoring = 1/\1monitoring = 0/' \
      /etc/lvm/lvm.conf \
 && test "$(lvmconfig activation/udev_sync)" = "udev_sync=0" \
 && test "$(lvmconfig activation/udev_rules)" = "udev_rules=0" \
 && test "$(lvmconfig activation/monitoring)" = "monitoring=0"
WORKDIR /app
COPY --from=build /app/packages/driver/dist/bundle ./
ENV NODE_ENV=production
# Root, on purpose: the node driver creates namespaces and volume groups on /dev, formats and
# mounts volumes into the kubelet's directories with bidirectional propagation (the DaemonSet runs
# it privileged), and the controller shares the image. The controller Deployment drops every
# capability and mounts a read-only root filesystem (packages/operator/src/objects/controller.ts).
USER 0:0
ENTRYPOINT ["node", "/app/pmem-csi-driver.mjs"]
