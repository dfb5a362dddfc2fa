#!/usr/bin/env bash
# Prints `export PMEM_CSI_<BINARY>=<path>` for the tools built by bootstrap.sh (all, or those
# named), e.g.  eval "$(bash e2e/tools/paths.sh)". Exits 1, naming the bootstrap command to run,
# when one of them is not built.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh" --print-env "$@"
