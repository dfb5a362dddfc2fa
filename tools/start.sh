#!/usr/bin/env bash
# npm start [-- OPTIONS]: the local stack (pmem-csi-driver local). The one-time set-up
# (tools/setup.sh: host tools, npm ci) runs first, except when the options only ask for --help or
# --version on a checkout that is already installed: those answer at once, with no side effects.
set -euo pipefail
cd "$(dirname "$0")/.."
informational=false
for arg in "$@"; do
  case "$arg" in -h|--help|--version) informational=true ;; esac
done
if [ "$informational" = false ] || [ ! -d node_modules/tsx ]; then
  bash tools/setup.sh
fi
exec node --conditions=@pmem-csi/source --import tsx packages/driver/src/main.ts local "$@"
