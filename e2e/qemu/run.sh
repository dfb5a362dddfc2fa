#!/usr/bin/env bash
# The real-PMEM test tier in one command (root; installs qemu-system-x86 and debootstrap itself,
# builds the guest image once and caches it): boots a QEMU TCG guest with two emulated NVDIMMs
# twice per device mode (lvm, direct) and ends with the line "qemu: N passed, N failed".
# Arguments go to e2e/qemu/harness.mjs (--mode lvm|direct, --record, --keep, --timeout S, --junit F).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
exec node e2e/qemu/harness.mjs "$@"
