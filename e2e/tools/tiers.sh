#!/usr/bin/env bash
# The test tiers of `npm run e2e` after the images are built: the e2e suites and the real-node tier
# one after the other in the foreground, and the real-PMEM tier (QEMU TCG guests, e2e/qemu/run.sh)
# beside them for the whole time. The foreground tiers keep about one of the machine's two cores
# busy (Kubernetes components mostly wait); the guests take what is left, at the lowest CPU
# priority (nice 9 here on top of the nice 10 e2e/qemu/guest-lib.sh gives every QEMU: 19), so the
# timing of the cluster tests is not theirs to disturb. Each tier runs through tools/phase.mjs under its own phase name.
# - The QEMU tier's output goes to tmp/qemu-tier.log while the others run (interleaved it would
#   be unreadable); it is printed when they end, then followed until the QEMU tier ends.
# - Its work directory is below /var/tmp, not the temporary directory: the leak check of every
#   e2e file watches the temporary directory for emulated volume files (*.img), and the guests'
#   NVDIMM and CXL backing files are such files.
# - A boot may take longer beside the other tiers than alone: --timeout 3600 per boot (alone
#   the slowest boot takes ~13 min).
# - As in an && chain, the real-node tier runs only when the e2e suites passed. The QEMU tier runs
#   to its end either way (its results are worth having), unless this script is interrupted.
# Exit code: 0 when every tier that ran passed, else 1. The last lines are each tier's counts.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p tmp
QEMU_LOG=tmp/qemu-tier.log
E2E_LOG=tmp/e2e-tier.log
REAL_NODE_LOG=tmp/real-node-tier.log
QEMU_WORK=/var/tmp/pmem-csi-qemu/$(date -u +%Y%m%dT%H%M%SZ)
rm -f "$E2E_LOG" "$REAL_NODE_LOG"

nice -n 9 node tools/phase.mjs qemu -- bash e2e/qemu/run.sh --timeout 3600 --work "$QEMU_WORK" >"$QEMU_LOG" 2>&1 &
qemu_pid=$!
stop_qemu() {
  kill -TERM "$qemu_pid" 2>/dev/null
  wait "$qemu_pid" 2>/dev/null
}
trap 'stop_qemu; exit 130' INT
trap 'stop_qemu; exit 143' TERM
echo "tiers: the QEMU tier runs beside the e2e and real-node tiers (pid $qemu_pid, work $QEMU_WORK); its output goes to $QEMU_LOG and is printed when they end" >&2

node tools/phase.mjs e2e-jest -- node tools/run-jest.mjs e2e --config e2e/jest.config.js --testPathIgnorePatterns /node_modules/ /src/realnode/ 2>&1 | tee "$E2E_LOG"
e2e_rc=${PIPESTATUS[0]}
real_node_rc=0
if [[ $e2e_rc -eq 0 ]]; then
  node tools/phase.mjs real-node -- npm run e2e:real-node 2>&1 | tee "$REAL_NODE_LOG"
  real_node_rc=${PIPESTATUS[0]}
else
  echo "tiers: the e2e tier failed (exit code $e2e_rc): the real-node tier does not run" >&2
fi

echo "tiers: waiting for the QEMU tier (pid $qemu_pid) to end; its output so far, then as it comes:" >&2
tail -n +1 -f --pid="$qemu_pid" "$QEMU_LOG"
wait "$qemu_pid"
qemu_rc=$?
trap - INT TERM

# Each tier's own count line, last (the e2e and real-node lines scrolled away long ago).
echo
grep -E '^e2e: [0-9]+ passed' "$E2E_LOG" | tail -n 1
[[ $e2e_rc -eq 0 ]] && grep -E '^real-node: [0-9]+ passed' "$REAL_NODE_LOG" | tail -n 1
grep -E '^qemu: [0-9]+ passed' "$QEMU_LOG" | tail -n 1
echo "tiers: exit codes e2e $e2e_rc, real-node $([[ $e2e_rc -eq 0 ]] && echo "$real_node_rc" || echo 'not run'), qemu $qemu_rc"
[[ $e2e_rc -eq 0 && $real_node_rc -eq 0 && $qemu_rc -eq 0 ]]
