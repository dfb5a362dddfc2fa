#!/usr/bin/env bash
# Runs Debian trixie's QEMU (the one that gives a guest working CXL persistent memory, see
# e2e/qemu/CXL.md) on this bookworm host. Builds, once, a trixie chroot holding exactly
#   qemu-system-x86 $QEMU_VERSION
# and caches it under ${PMEM_CSI_QEMU_CACHE:-$HOME/.cache/pmem-csi-qemu}/qemu-trixie-<version>/
# (debootstrap in qemu-trixie-<version>.tmp.XXXXXX, renamed into place at the end; concurrent
# builds serialize on a flock; a mirror serving another version is refused, naming both).
# Then runs that QEMU inside a private mount namespace (unshare -m): the chroot gets /dev, /proc
# and every --bind directory at its host path, so QEMU's arguments name host paths unchanged.
# The mounts live only in that namespace: nothing stays mounted after QEMU exits or is killed.
#
# usage: bash e2e/qemu/cxl/qemu.sh --build                   build/cache only, print the chroot
#        bash e2e/qemu/cxl/qemu.sh --version                 print the pinned version
#        bash e2e/qemu/cxl/qemu.sh [--bind DIR]... -- QEMU-ARGS...
# Needs root (debootstrap, chroot, unshare -m).
set -euo pipefail

QEMU_VERSION="1:10.0.13+ds-0+deb13u1"
SUITE=trixie
CACHE="${PMEM_CSI_QEMU_CACHE:-${HOME:-/root}/.cache/pmem-csi-qemu}"
DIR="$CACHE/qemu-$SUITE-$QEMU_VERSION"
T0=$(date +%s)
say() { printf 'cxl-qemu: [%4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
die() { printf 'cxl-qemu: error: %s\n' "$*" >&2; exit 2; }

mirror() {
  local m=""
  if [[ -r /etc/apt/sources.list.d/debian.sources ]]; then
    m=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  fi
  if [[ -z "$m" && -r /etc/apt/sources.list ]]; then
    m=$(awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list)
  fi
  printf '%s' "${m:-http://deb.debian.org/debian}"
}

build() {
  [[ -f "$DIR/build-info" ]] && return 0
  command -v debootstrap >/dev/null || die "debootstrap missing (apt-get install debootstrap; e2e/qemu/build-image.sh installs it)"
  local tmp m got
  tmp=$(mktemp -d "$DIR.tmp.XXXXXX")
  # debootstrap mounts /proc and /sys in the target while it runs: never delete through a mount.
  trap 'for mp in proc sys dev/pts dev; do umount -l "'"$tmp"'/root/$mp" 2>/dev/null; done; rm -rf --one-file-system "'"$tmp"'"' EXIT
  m=$(mirror)
  say "debootstrap $SUITE minbase + qemu-system-x86 from $m into $tmp (~3-6 min)"
  nice -n 19 debootstrap --variant=minbase --include=qemu-system-x86 "$SUITE" "$tmp/root" "$m" >"$tmp/debootstrap.log" 2>&1 \
    || { tail -n 30 "$tmp/debootstrap.log" >&2; die "debootstrap $SUITE failed (log above)"; }
  got=$(chroot "$tmp/root" dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null || true)
  [[ "$got" == "$QEMU_VERSION" ]] \
    || die "the mirror $m serves qemu-system-x86 '${got:-none}' for $SUITE, this script is pinned to '$QEMU_VERSION' (update QEMU_VERSION only after probing CXL pmem with it, see e2e/qemu/CXL.md)"
  rm -rf "$tmp"/root/var/cache/apt/archives/*.deb "$tmp"/root/var/lib/apt/lists/* "$tmp"/root/usr/share/{doc,man,locale}/*
  mv "$tmp/root" "$tmp/chroot"
  printf 'built=%s\nseconds=%s\nqemu=%s\nmirror=%s\n' "$(date -u +%FT%TZ)" "$(( $(date +%s) - T0 ))" "$got" "$m" >"$tmp/build-info"
  mv -T "$tmp" "$DIR"
  trap - EXIT
  say "QEMU $got ready in $(( $(date +%s) - T0 )) s: $DIR ($(du -sh "$DIR" | cut -f1))"
}

ensure_built() {
  [[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, chroot, unshare -m)"
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.qemu-$SUITE.lock"
  flock 9
  build
  exec 9>&-
}

case "${1:-}" in
  --version) echo "$QEMU_VERSION"; exit 0 ;;
  --build) ensure_built; echo "$DIR/chroot"; exit 0 ;;
esac

BINDS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bind) [[ -d "$2" ]] || die "--bind $2: not a directory"; BINDS+=("$(cd "$2" && pwd -P)"); shift 2 ;;
    --) shift; break ;;
    *) die "unknown argument $1 (usage: qemu.sh [--bind DIR]... -- QEMU-ARGS...)" ;;
  esac
done
ensure_built
ROOT="$DIR/chroot"
for b in "${BINDS[@]}"; do mkdir -p "$ROOT$b"; done

# The namespace's own script: private propagation first, so that no mount reaches the host.
# exec: QEMU replaces the shell; when it ends (or is killed) the namespace and its mounts go.
# shellcheck disable=SC2016
exec unshare -m -- /bin/bash -euc '
  root="$1"; shift
  mount --make-rprivate /
  mount --rbind /dev "$root/dev"
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys"
  while [[ "$1" != -- ]]; do mount --rbind "$1" "$root$1"; shift; done
  shift
  exec chroot "$root" /usr/bin/qemu-system-x86_64 "$@"
' cxl-qemu "$ROOT" "${BINDS[@]}" -- "$@"
