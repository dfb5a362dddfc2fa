# syntax=docker/dockerfile:1
# The PMEM-CSI driver image, pmem-csi-driver:<version>: one binary for the controller Deployment
# (--mode controller) and the node DaemonSet (--mode node). See deploy/images/README.md.
#   docker build -f deploy/images/driver.Dockerfile -t pmem-csi-driver:0.1.0 .      (repository root)
ARG NODE_IMAGE=node:24-bookworm-slim
# The image's version: its tag, its label and what the binary reports (--version, CSI
# GetPluginInfo, node registrations); the build stage writes it into the sources it compiles.
ARG VERSION=0.1.0

# Build: every workspace dependency, then one bundle of the driver with its npm dependencies inside
# (tools/bundle.mjs: a few ES modules, each device mode's code in its own chunk), checked by
# running it; the runtime stage needs no node_modules and starts without resolving ~400 modules.
# No compile cache here (--no-compile-cache): its entries are keyed by the files' paths, so the
# runtime stage makes it where the image runs the bundle.
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
 && node tools/bundle.mjs --no-compile-cache \
 && test "$(node packages/driver/dist/bundle/pmem-csi-driver.mjs --version)" = "pmem-csi-driver $VERSION" \
 && node packages/driver/dist/bundle/pmem-csi-driver.mjs --help >/dev/null

FROM ${NODE_IMAGE}
# The host tools the node driver runs (nodeTools() in packages/csi/src/host-tools.ts, Debian
# packages as TOOL_PACKAGES in packages/runtime/src/exec.ts names them); a test checks that this
# line installs every one of them. Size: xfsprogs pulls in libicu (36 MB) for xfs_scrub alone,
# which the driver never runs, so dpkg leaves its files out (path-exclude: apt still counts it as
# installed); python3's byte code (13 MB, compiled at install time for xfs_scrub_all) is not kept.
# The tools the driver runs must start: mkfs.xfs, xfs_io and xfs_growfs print their versions, and
# ndctl's cxl (CXL persistent memory, --cxl-regions) its own.
RUN printf '# pmem-csi-driver: libicu serves only xfs_scrub, which the driver never runs\npath-exclude /usr/lib/*/libicu*\n' \
      >/etc/dpkg/dpkg.cfg.d/pmem-csi-no-icu \
 && apt-get update \
 && apt-get install -y --no-install-recommends ndctl lvm2 e2fsprogs xfsprogs util-linux mount coreutils \
 && rm -rf /var/lib/apt/lists/* \
 && find /usr/lib -path '/usr/lib/python3*' -name __pycache__ -prune -exec rm -rf {} + \
 && mkfs.xfs -V && xfs_io -V && xfs_growfs -V && cxl --version
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
# Version and labels come after the host tools: images of different versions share those layers.
ARG VERSION
LABEL org.opencontainers.image.title="pmem-csi-driver" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.description="PMEM-CSI driver: CSI controller and node service for persistent memory" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /app
COPY --from=build /app/packages/driver/dist/bundle ./
ENV NODE_ENV=production
# Root, on purpose: the node driver creates namespaces and volume groups on /dev, formats and
# mounts volumes into the kubelet's directories with bidirectional propagation (the DaemonSet runs
# it privileged), and the controller shares the image. The controller Deployment drops every
# capability and mounts a read-only root filesystem (packages/operator/src/objects/controller.ts).
USER 0:0
# V8's compile cache of the bundle's modules (packages/driver/src/compile-cache.ts), made here, at the
# paths, with the Node.js and as the user the pods run: the entry turns it on from
# /app/compile-cache, and a start reads the byte code of ~1.3 MB of JavaScript instead of compiling
# it. The build fails unless a start reads it (NODE_DEBUG_NATIVE lists each module it accepted), in
# each mode: the node mode sets V8 flags of its own first (packages/driver/src/v8-mode-flags.ts),
# which key a cache directory of their own. The controller's read-only root filesystem is fine: a
# pod only reads the cache; a cache that cannot be read or written makes Node.js compile as usual,
# never fail.
RUN node /app/warm-compile-cache.mjs \
 && NODE_DEBUG_NATIVE=COMPILE_CACHE node /app/pmem-csi-driver.mjs --help 2>&1 >/dev/null \
    | grep -q '^\[compile cache\] V8 code cache for ESM file:///app/chunk-.* was accepted' \
 && NODE_DEBUG_NATIVE=COMPILE_CACHE node /app/pmem-csi-driver.mjs --mode=node --help 2>&1 >/dev/null \
    | grep -q '^\[compile cache\] V8 code cache for ESM file:///app/chunk-.* was accepted'
# No V8 options here: the controller and the node run this one entrypoint and want different heap
# limits, which only the pod knows; the operator sets NODE_OPTIONS per mode on the driver container
# (DRIVER_V8_OPTIONS in packages/csi/src/driver-runtime.ts; node: a young generation of a few MiB
# and a 64 MiB old space). By hand: docker run -e NODE_OPTIONS="..." ... --mode node.
ENTRYPOINT ["node", "/app/pmem-csi-driver.mjs"]
