#!/usr/bin/env bash
# Boots the QEMU tier's guest image (e2e/qemu/build-image.sh; built here when missing) ONCE under
# trixie's QEMU (e2e/qemu/cxl/qemu.sh; bookworm's 7.2 drops CXL memory writes, see e2e/qemu/CXL.md)
# on q35 with N emulated CXL type-3 persistent memory devices, runs one command in it the way
# e2e/qemu/run-guest.sh does (the guest's e2e/qemu/guest/init.sh runs /results/command.sh from /repo)
# and powers off. The command's exit code comes back in <results>/exit-code.
#
# usage: bash e2e/qemu/cxl/run-cxl-guest.sh --results DIR [--cxl FILE]... [--cxl-size SIZE]
#          [--lsa-size SIZE] [--state-disk FILE] [--image DIR] [--repo DIR] [--cache DIR] [--timeout SECONDS]
#          [--name LABEL] [--env K=V]... -- COMMAND...
#   --cxl FILE       a type-3 device's persistent memory backing file (created sparse when missing;
#                    its label storage area is FILE.lsa); repeat for more devices. Device i sits
#                    behind its own CXL host bridge (pxb-cxl) and root port, with its own fixed
#                    memory window of the device's size (cxl-fmw.i, decoder i.0 in the guest).
#   --cxl-size SIZE  size of each device's persistent memory (default 4G; a multiple of 256M)
#   --lsa-size SIZE  size of each label storage area (default 256M; sparse)
#   --state-disk FILE  a persistent ext4 disk mounted at /var/lib/pmem-csi.intel.com in the guest
#                    (made when missing), as run-guest.sh's: the node's state across boots
#   --timeout S      outer limit of the whole boot (default 1200)
# Exit code: the command's; 124 when the boot timed out, 125 when the guest gave no exit code.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
ME=run-cxl-guest
# shellcheck source=../guest-lib.sh
source "$HERE/../guest-lib.sh"
IMAGE="" RESULTS="" CACHE_DIR="" STATE_DISK="" TIMEOUT=1200 NAME=cxl CXL_SIZE=4G LSA_SIZE=256M
CXLS=() ENVS=()
die() { echo "run-cxl-guest: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --image) IMAGE="$2"; shift 2 ;;
    --results) RESULTS="$2"; shift 2 ;;
    --cxl) CXLS+=("$2"); shift 2 ;;
    --cxl-size) CXL_SIZE="$2"; shift 2 ;;
    --lsa-size) LSA_SIZE="$2"; shift 2 ;;
    --cache) CACHE_DIR="$2"; shift 2 ;;
    --state-disk) STATE_DISK="$2"; shift 2 ;;
    --repo) REPO="$(cd "$2" && pwd)"; shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    --name) NAME="$2"; shift 2 ;;
    --env) ENVS+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) die "unknown argument $1" ;;
  esac
done
[[ $# -gt 0 ]] || die "no command given (after --)"
[[ -n "$RESULTS" ]] || die "--results DIR is required"
[[ ${#CXLS[@]} -gt 0 ]] || die "no --cxl FILE given (at least one CXL device)"
[[ ${#CXLS[@]} -le 4 ]] || die "at most 4 --cxl devices (got ${#CXLS[@]})"
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds, got '$TIMEOUT'"
bytes() { numfmt --from=iec "$1" 2>/dev/null || die "$2: '$1' is not a size (e.g. 4G, 512M)"; }
CXL_BYTES=$(bytes "$CXL_SIZE" --cxl-size)
LSA_BYTES=$(bytes "$LSA_SIZE" --lsa-size)
MIB256=$((256 * 1024 * 1024))
[[ $CXL_BYTES -gt 0 && $((CXL_BYTES % MIB256)) -eq 0 ]] || die "--cxl-size must be a positive multiple of 256M (CXL decoder granule), got $CXL_SIZE"
[[ $LSA_BYTES -gt 0 ]] || die "--lsa-size must be positive, got $LSA_SIZE"

if [[ -z "$IMAGE" ]]; then
  IMAGE=$(bash "$REPO/e2e/qemu/build-image.sh")
fi
[[ -f "$IMAGE/vmlinux" && -f "$IMAGE/initrd.img" && -f "$IMAGE/rootfs.img" ]] \
  || die "$IMAGE is not a built image (run e2e/qemu/build-image.sh)"
IMAGE="$(cd "$IMAGE" && pwd -P)"

mkdir -p "$RESULTS"
RESULTS="$(cd "$RESULTS" && pwd -P)"
rm -f "$RESULTS/exit-code" "$RESULTS/guest-timings" "$RESULTS/guest-timings-$NAME"
write_command "$RESULTS" "${ENVS[@]}" -- "$@"

# Every PCI device names bus=pcie.0: otherwise QEMU puts it on the last bus, a CXL host bridge.
BINDS=(--bind "$IMAGE" --bind "$REPO" --bind "$RESULTS")
args=(
  -machine q35,cxl=on,accel=tcg -cpu max,-vmx,-svm -smp 1 -m 2G
  -kernel "$IMAGE/vmlinux" -initrd "$IMAGE/initrd.img"
  -append "console=ttyS0 root=/dev/vda rw rootfstype=ext4 init=/sbin/pmem-init panic=1 loglevel=4 mitigations=off tsc=reliable"
  -drive "file=$IMAGE/rootfs.img,format=raw,if=none,id=root,snapshot=on" -device virtio-blk-pci,drive=root,bus=pcie.0
  -fsdev "local,id=fsrepo,path=$REPO,security_model=none,readonly=on" -device virtio-9p-pci,fsdev=fsrepo,mount_tag=repo,bus=pcie.0
  -fsdev "local,id=fsres,path=$RESULTS,security_model=none" -device virtio-9p-pci,fsdev=fsres,mount_tag=results,bus=pcie.0
  -nic none -display none -monitor none -serial stdio -no-reboot
)
if [[ -n "$CACHE_DIR" ]]; then
  mkdir -p "$CACHE_DIR"
  CACHE_DIR="$(cd "$CACHE_DIR" && pwd -P)"
  BINDS+=(--bind "$CACHE_DIR")
  args+=(-fsdev "local,id=fscache,path=$CACHE_DIR,security_model=none" -device virtio-9p-pci,fsdev=fscache,mount_tag=cache,bus=pcie.0)
fi
declare -A SEEN=()
if [[ -n "$STATE_DISK" ]]; then
  mkdir -p "$(dirname "$STATE_DISK")"
  STATE_DISK="$(cd "$(dirname "$STATE_DISK")" && pwd -P)/$(basename "$STATE_DISK")"
  make_state_disk "$STATE_DISK"
  BINDS+=(--bind "$(dirname "$STATE_DISK")"); SEEN[$(dirname "$STATE_DISK")]=1
  # The guest's init mounts /dev/vdb (the second virtio disk after the root) as the state directory.
  args+=(-drive "file=$STATE_DISK,format=raw,if=none,id=state" -device virtio-blk-pci,drive=state,bus=pcie.0)
fi
i=0 FMW=""
for f in "${CXLS[@]}"; do
  mkdir -p "$(dirname "$f")"
  f="$(cd "$(dirname "$f")" && pwd -P)/$(basename "$f")"
  [[ -f "$f" ]] || truncate -s "$CXL_BYTES" "$f"
  [[ $(stat -c %s "$f") -eq $CXL_BYTES ]] || die "--cxl $f is $(stat -c %s "$f") bytes, --cxl-size says $CXL_BYTES"
  [[ -f "$f.lsa" ]] || truncate -s "$LSA_BYTES" "$f.lsa"
  d="$(dirname "$f")"
  [[ -n "${SEEN[$d]:-}" ]] || { BINDS+=(--bind "$d"); SEEN[$d]=1; }
  bus=$((12 + 8 * i))
  args+=(
    -object "memory-backend-file,id=cxl-mem$i,share=on,mem-path=$f,size=$CXL_BYTES"
    -object "memory-backend-file,id=cxl-lsa$i,share=on,mem-path=$f.lsa,size=$(stat -c %s "$f.lsa")"
    -device "pxb-cxl,bus_nr=$bus,bus=pcie.0,id=cxl.$i"
    -device "cxl-rp,port=0,bus=cxl.$i,id=cxl-rp$i,chassis=$i,slot=$((2 + i))"
    -device "cxl-type3,bus=cxl-rp$i,persistent-memdev=cxl-mem$i,lsa=cxl-lsa$i,id=cxl-pmem$i,sn=$((i + 1))"
  )
  FMW+="${FMW:+,}cxl-fmw.$i.targets.0=cxl.$i,cxl-fmw.$i.size=$CXL_BYTES"
  i=$((i + 1))
done

# All fixed memory windows in one -M: QEMU refuses cxl-fmw.* spread over several.
args+=(-M "$FMW")

echo "run-cxl-guest: booting $NAME (TCG, QEMU $(bash "$HERE/qemu.sh" --version), $i CXL type-3 device(s) of $CXL_SIZE, timeout ${TIMEOUT}s); console: $RESULTS/console-$NAME.log" >&2
# qemu.sh runs QEMU in its own mount namespace: a timeout's kill leaves no mount behind.
boot_guest "$NAME" "$TIMEOUT" "$RESULTS" -- bash "$HERE/qemu.sh" "${BINDS[@]}" -- "${args[@]}"
