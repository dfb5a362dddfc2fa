#!/usr/bin/env bash
# Boots the cached guest (build-image.sh) ONCE under QEMU TCG with emulated NVDIMMs, runs one
# command in it non-interactively and powers off. The command's exit code comes back in
# <results>/exit-code; whatever it writes to /results in the guest lands in <results>.
#
# usage: bash e2e/qemu/run-guest.sh --image DIR --results DIR [--nvdimm FILE]... [--state-disk FILE]
#          [--repo DIR] [--timeout SECONDS] [--smp N] [--name LABEL] [--env K=V]... -- COMMAND...
#   --nvdimm FILE      an NVDIMM backing file (created sparse when missing); repeat for more (each
#                      NVDIMM is its own region). The files keep the PMEM between boots.
#   --kata-nvdimm FILE an existing Kata Containers image file (issue 26) as one more NVDIMM, the way
#                      Kata's runtime hands it to QEMU: its own size, no label area, share=on (the
#                      guest's writes reach the file)
#   --cache DIR        a host directory shared read-write as /cache (e.g. Jest's transform cache,
#                      so that later boots do not transpile again)
#   --state-disk FILE  a persistent ext4 disk mounted at /var/lib/pmem-csi.intel.com in the guest
#                      (created when missing)
#   --repo DIR         shared read-only as /repo (default: this repository); the command runs there
#   --timeout SECONDS  outer limit of the whole boot (default 1200)
# Exit code: the command's; 124 when the boot timed out (says so), 125 when the guest ended
# without reporting an exit code (kernel panic, init failure: see <results>/console-<name>.log).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ME=run-guest
# shellcheck source=guest-lib.sh
source "$HERE/guest-lib.sh"
REPO="$(cd "$HERE/../.." && pwd)"
IMAGE="" RESULTS="" STATE_DISK="" CACHE_DIR="" TIMEOUT=1200 SMP=1 NAME=guest
NVDIMMS=() KATA_NVDIMMS=() ENVS=()
# Each backing file holds the PMEM plus, at its end, the 128 KiB label area: 4 GiB + 128 KiB gives
# a region of exactly 4 GiB. With a plain 4 GiB file the region is 4 GiB - 128 KiB and the NEXT
# NVDIMM starts at an address that is not 16 MiB aligned, where `ndctl create-namespace` fails
# ("namespace1.0 misaligned to 16M, adjust region alignment and retry"). 2 GiB would be too
# small anyway: lvm mode needs a region of at least 2 GiB.
NVDIMM_SIZE=$(( 4 * 1024 * 1024 * 1024 + 128 * 1024 ))
LABEL_SIZE=128K
RAM=2G

while [[ $# -gt 0 ]]; do
  case "$1" in
    --image) IMAGE="$2"; shift 2 ;;
    --results) RESULTS="$2"; shift 2 ;;
    --nvdimm) NVDIMMS+=("$2"); shift 2 ;;
    --kata-nvdimm) KATA_NVDIMMS+=("$2"); shift 2 ;;
    --state-disk) STATE_DISK="$2"; shift 2 ;;
    --cache) CACHE_DIR="$2"; shift 2 ;;
    --repo) REPO="$(cd "$2" && pwd)"; shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    --smp) SMP="$2"; shift 2 ;;
    --name) NAME="$2"; shift 2 ;;
    --env) ENVS+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "run-guest: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $# -gt 0 ]] || { echo "run-guest: no command given (after --)" >&2; exit 2; }
[[ -f "$IMAGE/vmlinux" && -f "$IMAGE/initrd.img" && -f "$IMAGE/rootfs.img" ]] \
  || { echo "run-guest: $IMAGE is not a built image (run e2e/qemu/build-image.sh)" >&2; exit 2; }
[[ -n "$RESULTS" ]] || { echo "run-guest: --results DIR is required" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "run-guest: qemu-system-x86_64 missing (build-image.sh installs it)" >&2; exit 2; }

mkdir -p "$RESULTS"
RESULTS="$(cd "$RESULTS" && pwd)"
rm -f "$RESULTS/exit-code" "$RESULTS/guest-timings" "$RESULTS/guest-timings-$NAME"

write_command "$RESULTS" "${ENVS[@]}" -- "$@"

# NVDIMMs sit in the hotplug memory area: slots and maxmem must make room for them (5 GiB each).
# A Kata image (its own size, below 4 GiB here) gets 5 GiB of room too.
MEMORY=$RAM
DIMMS=$(( ${#NVDIMMS[@]} + ${#KATA_NVDIMMS[@]} ))
[[ $DIMMS -gt 0 ]] && MEMORY="$RAM,slots=4,maxmem=$((2 + 5 * DIMMS))G"
args=(
  -machine pc,nvdimm=on,accel=tcg -cpu max,-vmx,-svm -smp "$SMP"
  -m "$MEMORY"
  -kernel "$IMAGE/vmlinux" -initrd "$IMAGE/initrd.img"
  -append "console=ttyS0 root=/dev/vda rw rootfstype=ext4 init=/sbin/pmem-init panic=1 loglevel=4 mitigations=off tsc=reliable"
  -drive "file=$IMAGE/rootfs.img,format=raw,if=virtio,snapshot=on"
  -virtfs "local,path=$REPO,mount_tag=repo,security_model=none,readonly=on"
  -virtfs "local,path=$RESULTS,mount_tag=results,security_model=none"
  -nic none -display none -monitor none -serial stdio -no-reboot
)
if [[ -n "$CACHE_DIR" ]]; then
  mkdir -p "$CACHE_DIR"
  args+=(-virtfs "local,path=$(cd "$CACHE_DIR" && pwd),mount_tag=cache,security_model=none")
fi
if [[ -n "$STATE_DISK" ]]; then
  make_state_disk "$STATE_DISK"
  args+=(-drive "file=$STATE_DISK,format=raw,if=virtio")
fi
i=0
for f in "${NVDIMMS[@]}"; do
  [[ -f "$f" ]] || truncate -s "$NVDIMM_SIZE" "$f"
  args+=(-object "memory-backend-file,id=mem$i,share=on,mem-path=$f,size=$NVDIMM_SIZE"
         -device "nvdimm,id=nv$i,memdev=mem$i,label-size=$LABEL_SIZE")
  i=$((i + 1))
done
for f in "${KATA_NVDIMMS[@]}"; do
  [[ -f "$f" ]] || { echo "run-guest: --kata-nvdimm $f: no such file" >&2; exit 2; }
  args+=(-object "memory-backend-file,id=mem$i,share=on,mem-path=$f,size=$(stat -c %s "$f")"
         -device "nvdimm,id=nv$i,memdev=mem$i")
  i=$((i + 1))
done

echo "run-guest: booting $NAME (TCG, smp $SMP, $DIMMS NVDIMM(s), timeout ${TIMEOUT}s); console: $RESULTS/console-$NAME.log" >&2
# -serial stdio: the guest console on our stdout (and in the log).
boot_guest "$NAME" "$TIMEOUT" "$RESULTS" -- qemu-system-x86_64 "${args[@]}"
