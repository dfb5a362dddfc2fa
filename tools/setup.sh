#!/usr/bin/env bash
# One-time set-up of a fresh machine for development and tests: npm packages and the host tools
# that the emulated device mode and the tests run (mkfs, mount, losetup, blkid, findmnt, xfs_io;
# ss reads a listener's backlog in runtime's server-backlog test).
# Idempotent: what is already there costs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
for pair in mkfs.ext4:e2fsprogs mkfs.xfs:xfsprogs xfs_io:xfsprogs losetup:mount blkid:util-linux findmnt:util-linux ss:iproute2; do
  tool=${pair%%:*}; pkg=${pair##*:}
  command -v "$tool" >/dev/null 2>&1 || need_pkgs+=("$pkg")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${need_pkgs[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
  else
    echo "setup: missing host tools from Debian packages: ${need_pkgs[*]} (install them as root)" >&2
  fi
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund
fi
