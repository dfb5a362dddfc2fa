#!/usr/bin/env bash
# The k8s-storage tier on its own: Kubernetes' External Storage suite (e2e.test of the pinned
# Kubernetes) against PMEM-CSI on the real node. Builds what is missing first (cached: seconds when
# warm), then runs e2e/src/realnode/k8s-storage.e2e.test.ts. Root, like the real-node tier.
#
# usage: bash e2e/k8s-storage/run.sh          the curated subset (what `npm run e2e` runs)
#        bash e2e/k8s-storage/run.sh --full   every External Storage spec of both definitions;
#                                             writes e2e/k8s-storage/RESULTS.md
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mode=curated
case "${1:-}" in
  "") ;;
  --full) mode=full ;;
  *) echo "usage: bash e2e/k8s-storage/run.sh [--full] (got: $*)" >&2; exit 2 ;;
esac
cd "$ROOT"
bash e2e/tools/bootstrap.sh
bash e2e/tools/images.sh
PMEM_CSI_K8S_STORAGE="$mode" exec node tools/run-jest.mjs k8s-storage-jest --config e2e/jest.config.js \
  e2e/src/realnode/k8s-storage.e2e.test.ts
