#!/usr/bin/env bash
# The one warm-up of a fresh machine: builds every cache that `.ci/run` would otherwise build cold,
# so that CI (90 min) finds them warm. Run it (as root) in a session on a new machine before it stops:
#   npm run warm
# What it builds, each idempotent and cached by version or input hash (a second run costs seconds):
#   npm packages and the Debian packages of the tests (tools/setup.sh),
#   the pinned tools (e2e/tools/bootstrap.sh: csi-sanity, kwok, Kubernetes, the sidecars, e2e.test, ...),
#   the real-node images of this version and of the upgrade scenario's (e2e/tools/images.sh),
#   the QEMU guest image (e2e/qemu/build-image.sh) and trixie's QEMU for the CXL guests
#   (e2e/qemu/cxl/qemu.sh --build: a debootstrap chroot, ~75 s and 195 MiB cold).
# Not warmed: the Nx task cache (typecheck/lint, ~2 min cold), which any `npm test` fills.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
step() { printf 'warm: %s (%ds so far)\n' "$*" $((SECONDS - started)) >&2; }
[ "$(id -u)" -eq 0 ] || { echo 'warm: needs root (images and the QEMU guest are built with debootstrap/chroot)' >&2; exit 2; }
step 'set-up (npm ci, Debian packages)'
bash tools/setup.sh
step 'pinned tools'
bash e2e/tools/bootstrap.sh >/dev/null
step 'real-node images'
bash e2e/tools/images.sh >/dev/null
bash e2e/tools/images.sh --version 0.1.1-e2e >/dev/null
step 'QEMU guest image'
bash e2e/qemu/build-image.sh >/dev/null
step "trixie's QEMU for the CXL guests"
bash e2e/qemu/cxl/qemu.sh --build >/dev/null
step "done: every cache of .ci/run is warm"
