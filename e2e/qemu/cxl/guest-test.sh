#!/bin/sh
# In a CXL guest of the QEMU tier (e2e/qemu/harness.mjs, modes cxl-lvm and cxl-direct): load the
# CXL drivers, then run the node's CXL guest suite (packages/node/src/device/cxl.guest.test.ts) with
# Jest's guest config, its JSON result in /results/<file>.
# usage: sh e2e/qemu/cxl/guest-test.sh <json file name>
# PMEM_CSI_GUEST_MODE (lvm|direct), PMEM_CSI_GUEST_PMEM=cxl and PMEM_CSI_GUEST_BOOT come from the harness.
[ -n "$1" ] || { echo "guest-test.sh: usage: sh e2e/qemu/cxl/guest-test.sh <json file name>" >&2; exit 2; }
sh /repo/e2e/qemu/cxl/guest-cxl-modules.sh || exit 1
exec node --experimental-vm-modules --no-warnings=ExperimentalWarning node_modules/jest/bin/jest.js \
  --config e2e/qemu/jest.guest.config.js --ci --forceExit --json "--outputFile=/results/$1" \
  packages/node/src/device/cxl.guest.test.ts
