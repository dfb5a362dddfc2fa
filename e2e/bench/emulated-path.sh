#!/usr/bin/env bash
# The emulated device path of a volume done by a plain shell script: the state-changing host
# commands the node driver runs in emulated mode (sparse file + loop device, mkfs.ext4 with the
# driver's options, mount, bind mount, umounts, head erase, detach), without its RPCs, locks,
# state files and safety queries (findmnt, losetup --list, blkid). The reference of benchmark B2.
# usage: bash e2e/bench/emulated-path.sh DIR COUNT SIZE_BYTES   (root; loop devices)
# Prints one JSON line: {"volumes":N,"msPerVolume":X,"stepsMs":{"create":..,...}} (means).
set -euo pipefail
dir="${1:?usage: emulated-path.sh DIR COUNT SIZE_BYTES}" count="${2:?COUNT}" size="${3:?SIZE_BYTES}"
[[ "$count" =~ ^[1-9][0-9]*$ ]] || { echo "COUNT must be a positive integer, got '$count'" >&2; exit 2; }
[[ "$size" =~ ^[1-9][0-9]*$ ]] || { echo "SIZE_BYTES must be a positive integer, got '$size'" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "emulated-path.sh needs root (loop devices, mount)" >&2; exit 2; }
mkdir -p "$dir"
export LC_ALL=C

declare -A total=([create]=0 [stage]=0 [publish]=0 [unpublish]=0 [unstage]=0 [delete]=0)
now() { date +%s%N; }
dev="" file="" staging="" target=""
cleanup() { # after a failure: leave no mount or loop device behind
  [[ -n "$target" ]] && umount "$target" 2>/dev/null || true
  [[ -n "$staging" ]] && umount "$staging" 2>/dev/null || true
  [[ -n "$dev" ]] && losetup --detach "$dev" 2>/dev/null || true
  [[ -n "$file" ]] && rm -f "$file" || true
}
trap cleanup EXIT

step() { # <name> <command...>: run it, add its time to the step's total
  local name="$1" t0
  shift
  t0=$(now)
  "$@"
  total[$name]=$((total[$name] + $(now) - t0))
}

create() { truncate -s "$size" "$file" && dev=$(timeout 30 losetup --find --show --nooverlap "$file"); }
stage() { timeout 120 mkfs.ext4 -q -b 4096 -E stride=512,stripe_width=512 -F "$dev" && timeout 30 mount -t ext4 "$dev" "$staging"; }
publish() { mkdir -p "$target" && timeout 30 mount --bind "$staging" "$target"; }
unpublish() { timeout 30 umount "$target" && rmdir "$target"; }
unstage() { timeout 30 umount "$staging"; }
delete() {
  timeout 30 dd if=/dev/zero of="$dev" bs=4096 count=1 oflag=direct conv=fsync status=none
  timeout 30 losetup --detach "$dev" && rm -f "$file"
}

start=$(now)
for ((i = 0; i < count; i++)); do
  file="$dir/vol-$i.img" staging="$dir/vol-$i/staging" target="$dir/vol-$i/target"
  mkdir -p "$staging"
  step create create
  step stage stage
  step publish publish
  step unpublish unpublish
  step unstage unstage
  step delete delete
  rm -rf "$dir/vol-$i"
  dev="" file="" staging="" target=""
done
elapsed=$(($(now) - start))
ms() { awk -v ns="$1" -v n="$count" 'BEGIN { printf "%.3f", ns / n / 1e6 }'; }
printf '{"volumes":%d,"msPerVolume":%s,"stepsMs":{"create":%s,"stage":%s,"publish":%s,"unpublish":%s,"unstage":%s,"delete":%s}}\n' \
  "$count" "$(ms "$elapsed")" "$(ms "${total[create]}")" "$(ms "${total[stage]}")" "$(ms "${total[publish]}")" \
  "$(ms "${total[unpublish]}")" "$(ms "${total[unstage]}")" "$(ms "${total[delete]}")"
