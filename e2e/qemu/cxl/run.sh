#!/usr/bin/env bash
# The CXL proof (issue 27), by hand for now: boots the CXL guest (run-cxl-guest.sh: trixie's QEMU,
# two blank 4 GiB CXL type-3 persistent devices) once per device mode and runs
# packages/node/src/device/cxl.guest.test.ts in it: cxl list, region assembly by the node, the
# mode's device cases, a CSI case with -o dax and statx, the DeviceManager contract.
# Results (Jest JSON, consoles, recorded cxl/ndctl outputs) under $RESULTS
# (default /tmp/pmem-csi-cxl-results/<mode>).
# usage: bash e2e/qemu/cxl/run.sh [--mode lvm|direct] (default: both, one after the other)
#          [--timeout SECONDS per boot, default 1500]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
MODES=(lvm direct) TIMEOUT=1500
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mode) [[ "$2" == lvm || "$2" == direct ]] || { echo "cxl/run.sh: --mode must be lvm or direct, got '$2'" >&2; exit 2; }
      MODES=("$2"); shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    *) echo "cxl/run.sh: unknown argument $1 (allowed: --mode lvm|direct, --timeout S)" >&2; exit 2 ;;
  esac
done
BASE="${RESULTS:-/tmp/pmem-csi-cxl-results}"
CACHE="${PMEM_CSI_QEMU_CACHE:-${HOME:-/root}/.cache/pmem-csi-qemu}"
rc=0
for mode in "${MODES[@]}"; do
  dir="$BASE/$mode"
  rm -rf "$dir"; mkdir -p "$dir"
  t0=$(date +%s)
  set +e
  bash e2e/qemu/cxl/run-cxl-guest.sh --results "$dir" --name "cxl-$mode" --timeout "$TIMEOUT" \
    --cxl "$dir/cxl0.img" --cxl "$dir/cxl1.img" --cache "$CACHE/guest-cache" \
    --env "PMEM_CSI_GUEST_MODE=$mode" --env PMEM_CSI_GUEST_BOOT=1 --env PMEM_CSI_GUEST_RESULTS=/results \
    -- sh e2e/qemu/cxl/guest-test.sh
  r=$?
  set -e
  counts=$(node -e 'const j=require(process.argv[1]);console.log(`${j.numPassedTests} passed, ${j.numFailedTests} failed`)' "$dir/jest-cxl-$mode.json" 2>/dev/null || echo "no Jest results")
  echo "cxl: $mode: exit $r, $counts, $(( ($(date +%s) - t0) / 60 )) min $(( ($(date +%s) - t0) % 60 )) s (results: $dir)"
  [[ $r -eq 0 ]] || rc=$r
done
exit $rc
