#!/usr/bin/env bash
# Regenerates the Go code of proto/registry.proto (committed; the bench-tools build needs no protoc).
# Needs protoc (Debian: apt-get install protobuf-compiler); the Go plugins come from the Go module
# proxy at the versions below. Run after a change of proto/registry.proto:
#   bash e2e/bench/go/internal/registrypb/gen.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROTO_DIR="$(cd "$HERE/../../../../../proto" && pwd)"
PROTOC_GEN_GO=google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC=google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
GO_PACKAGE=pmem-csi.local/bench/internal/registrypb

command -v protoc >/dev/null || { echo "gen.sh: protoc is missing (apt-get install protobuf-compiler)" >&2; exit 2; }
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
GOTOOLCHAIN=local GOBIN="$bin" go install "$PROTOC_GEN_GO"
GOTOOLCHAIN=local GOBIN="$bin" go install "$PROTOC_GEN_GO_GRPC"
PATH="$bin:$PATH" protoc -I "$PROTO_DIR" \
  --go_out="$HERE" --go_opt=paths=source_relative --go_opt="Mregistry.proto=$GO_PACKAGE" \
  --go-grpc_out="$HERE" --go-grpc_opt=paths=source_relative --go-grpc_opt="Mregistry.proto=$GO_PACKAGE" \
  registry.proto
sha256sum <"$PROTO_DIR/registry.proto" | cut -d' ' -f1 >"$HERE/registry.proto.sha256"
echo "gen.sh: generated $HERE/registry.pb.go and registry_grpc.pb.go"
