#!/usr/bin/env bash
# Builds the pinned real components (e2e/tools/versions.env) from source into a cache keyed by
# tool and version:
#   ${PMEM_CSI_TOOLS_CACHE:-$HOME/.cache/pmem-csi-tools}/<tool>/<version>/bin/<binary>
#
# usage: bash e2e/tools/bootstrap.sh [tool|binary ...]     build what is missing (no args = all)
#        bash e2e/tools/bootstrap.sh --print-env [tool ...] print `export PMEM_CSI_<BINARY>=<path>`
#                                                          for cached tools (exit 1 if one is missing)
#        bash e2e/tools/bootstrap.sh --list                 tools, versions and binaries
#
# Idempotent and cheap when warm: a tool is cached when all its binaries exist and its `stamp`
# file equals the build inputs (recipe, version, Go toolchain, ldflags). A build happens in a
# temporary directory beside the final one and is renamed into place only after the binaries
# built and printed the expected version, so an interrupted or failed build is never taken for a
# cached one. Concurrent runs serialise per tool and version with flock.
#
# Measured cold on 2 shared cores (load 7-15): all tools 68 min wall / 44 min CPU, of which
# Kubernetes 37 min / 23 min CPU; ~6 GB of Go build cache, ~2 GB of module cache, 600 MB here.
# Progress goes to stderr; the closing table (`name version path`, one line per binary) to stdout.
# Environment: PMEM_CSI_TOOLS_CACHE (cache root), PMEM_CSI_TOOLS_GO_P (go build -p, default 2).
# Go builds run under `nice -n 19`, CGO_ENABLED=0, GOTOOLCHAIN=local.
set -euo pipefail
shopt -s inherit_errexit # `set -e` inside $(...) too

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
# shellcheck source=versions.env
source "$HERE/versions.env"

# Bump when a recipe below changes in a way that must rebuild cached tools.
RECIPE_REVISION=1
CACHE="${PMEM_CSI_TOOLS_CACHE:-${HOME:-/root}/.cache/pmem-csi-tools}"
GO_P="${PMEM_CSI_TOOLS_GO_P:-2}"

say() { printf 'tools: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

# --- the pins, read from versions.env (into arrays: no subshells, so a warm run stays fast) ---
declare -A VER BINS
# Tools built from this repository's sources (version "source" in versions.env).
declare -A SRC_DIR=([bench-tools]="$(cd "$HERE/../bench/go" && pwd)" [realnode-tools]="$(cd "$HERE/../realnode/go" && pwd)"
  [release-tools]="$(cd "$HERE/../release/go" && pwd)")

# The version of a tool built from its sources: src-<sha256 of its go.mod, go.sum and *.go files,
# names and contents>, so that every edit builds (and caches) a new version.
source_version() { # <dir>
  local dir="$1" sum
  sum="$(cd "$dir" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum)"
  printf 'src-%s' "${sum:0:16}"
}

load_pins() {
  local t v b
  for t in $TOOLS; do
    v="${t^^}" b="${t^^}"
    v="${v//-/_}_VERSION" b="${b//-/_}_BINARIES"
    [[ -n "${!v:-}" && -n "${!b:-}" ]] || die "versions.env lacks $v or $b"
    VER[$t]="${!v}" BINS[$t]="${!b}"
    if [[ "${VER[$t]}" == source ]]; then
      [[ -n "${SRC_DIR[$t]:-}" ]] || die "$v=source, but bootstrap.sh knows no source directory of $t"
      VER[$t]="$(source_version "${SRC_DIR[$t]}")"
    fi
  done
}
load_pins
[[ "${VER[kubelet]:-}" == "${VER[kubernetes]:-}" ]] ||
  die "versions.env: KUBELET_VERSION (${VER[kubelet]:-unset}) must equal KUBERNETES_VERSION (${VER[kubernetes]:-unset})"
[[ "${VER[kubernetes-e2e]:-}" == "${VER[kubernetes]:-}" ]] ||
  die "versions.env: KUBERNETES_E2E_VERSION (${VER[kubernetes-e2e]:-unset}) must equal KUBERNETES_VERSION (${VER[kubernetes]:-unset})"
[[ -n "${AGNHOST_VERSION:-}" && -n "${E2E_IMAGE_BUSYBOX:-}" && -n "${E2E_IMAGE_NGINX:-}" && -n "${E2E_IMAGE_JESSIE_DNSUTILS:-}" ]] ||
  die "versions.env lacks AGNHOST_VERSION or an E2E_IMAGE_* (the test images of kubernetes-e2e)"

# A tool name or one of the binaries it provides -> the tool name.
resolve_tool() {
  local name="$1" t b
  for t in $TOOLS; do [[ "$t" == "$name" ]] && { printf '%s' "$t"; return 0; }; done
  for t in $TOOLS; do
    for b in ${BINS[$t]}; do [[ "$b" == "$name" ]] && { printf '%s' "$t"; return 0; }; done
  done
  die "unknown tool '$name' (known: $TOOLS, or one of their binaries; see --list)"
}

# --- recipes ----------------------------------------------------------------------------------
# Sets: METHOD (install|wrapper|local), MODULE, PKGS (array), LDFLAGS, TAGS (go build -tags, install
# method only; part of the stamp when set), REPLACES (none|single-line|staging), ESTIMATE (for the
# progress line), TESTPKG (wrapper method only: a package whose test binary `go test -c` builds as
# the tool's first binary; part of the stamp when set), STAMP_EXTRA (a further stamp line when set).
recipe() {
  local tool="$1" v="${VER[$1]}"
  MODULE="" REPLACES=none LDFLAGS="-s -w" TAGS="" TESTPKG="" STAMP_EXTRA=""
  case "$tool" in
    csi-sanity)
      METHOD=install ESTIMATE="~1 min"
      PKGS=(github.com/kubernetes-csi/csi-test/v5/cmd/csi-sanity)
      LDFLAGS+=" -X main.VERSION=$v" ;;
    promtool)
      # Built without Prometheus's service-discovery plugins: plugins/plugin_*.go are guarded by
      # `//go:build !remove_all_sd || enable_<name>_sd`, so remove_all_sd leaves only file and http
      # SD (plugins/minimum.go) and drops the cloud SDKs (AWS, Azure, GCE, OCI, ...) that made
      # the build slow. Rule checking and rule unit tests need none of them; `promtool check
      # config` of a config using a removed SD would fail, and we never run that.
      # Measured cold (EMPTY module and build cache: GOMODCACHE and GOCACHE in fresh directories)
      # on 2 shared cores, -p=2, nice: every plugin 15m30s CPU (17m06s wall at load 18 -> 1;
      # 1.8 GB of modules, 1.8 GB of build cache, 88 MB binary); remove_all_sd 6m09s-6m42s CPU,
      # 4m55s wall at load 1-5 and 17m43s at load 15-25 (965 MB of modules, 850 MB of build
      # cache, 54 MB binary).
      METHOD=install ESTIMATE="~6-7 min of CPU; 5 min wall on a quiet machine, up to 18 on a busy one"
      TAGS=remove_all_sd
      PKGS=(github.com/prometheus/prometheus/cmd/promtool)
      LDFLAGS+=" -X github.com/prometheus/common/version.Version=$PROMTOOL_RELEASE"
      LDFLAGS+=" -X github.com/prometheus/common/version.Revision=$v" ;;
    kwok)
      METHOD=install ESTIMATE="~5-11 min"
      PKGS=(sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl) ;;
    helm)
      METHOD=install ESTIMATE="~4-8 min"
      PKGS=(helm.sh/helm/v3/cmd/helm)
      LDFLAGS+=" -X helm.sh/helm/v3/internal/version.version=$v"
      LDFLAGS+=" -X helm.sh/helm/v3/internal/version.metadata="
      local p
      for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
        LDFLAGS+=" -X $p.k8sVersionMajor=$HELM_K8S_MAJOR -X $p.k8sVersionMinor=$HELM_K8S_MINOR"
      done ;;
    kustomize)
      METHOD=install ESTIMATE="~1-2 min"
      PKGS=(sigs.k8s.io/kustomize/kustomize/v5) ;;
    external-provisioner)
      METHOD=wrapper ESTIMATE="~4-7 min" REPLACES=single-line
      MODULE=github.com/kubernetes-csi/external-provisioner/v6
      PKGS=("$MODULE/cmd/csi-provisioner")
      LDFLAGS+=" -X main.version=$v" ;;
    external-resizer) # measured cold: 5m15s CPU, 8 min wall at load 10
      METHOD=install ESTIMATE="~3-8 min"
      PKGS=(github.com/kubernetes-csi/external-resizer/v2/cmd/csi-resizer)
      LDFLAGS+=" -X main.version=$v" ;;
    etcd)
      METHOD=wrapper ESTIMATE="~1-3 min"
      MODULE=go.etcd.io/etcd/server/v3
      PKGS=("$MODULE") ;;
    bench-tools) # the benchmarks' Go module in this repository (e2e/bench/go), built in place
      METHOD=local ESTIMATE="~1-2 min cold, seconds with a warm Go cache"
      MODULE=pmem-csi.local/bench
      PKGS=(./cmd/pmem-csi-bench)
      LDFLAGS+=" -X main.version=$v" ;;
    realnode-tools) # the real-node tier's Go module in this repository (e2e/realnode/go)
      METHOD=local ESTIMATE="~1-2 min cold, seconds with a warm Go cache"
      MODULE=pmem-csi.local/realnode
      PKGS=(./cmd/pmem-csi-pause ./cmd/pmem-csi-registrar)
      LDFLAGS+=" -X main.version=$v" ;;
    coredns)
      METHOD=install ESTIMATE="~3-8 min"
      PKGS=(github.com/coredns/coredns) ;;
    syft) # the release's SBOM generator; goreleaser's ldflags without date and commit
      METHOD=install ESTIMATE="~5-10 min"
      PKGS=(github.com/anchore/syft/cmd/syft)
      LDFLAGS+=" -X main.version=${v#v}" ;;
    cosign) # the release's signer (key files; no keyless: no internet)
      METHOD=install ESTIMATE="~5-10 min"
      PKGS=(github.com/sigstore/cosign/v2/cmd/cosign)
      LDFLAGS+=" -X sigs.k8s.io/release-utils/version.gitVersion=$v -X sigs.k8s.io/release-utils/version.gitTreeState=clean" ;;
    distribution) # CNCF distribution's registry: the OCI registry of the release tests
      METHOD=install ESTIMATE="~3-6 min"
      PKGS=(github.com/distribution/distribution/v3/cmd/registry)
      LDFLAGS+=" -X github.com/distribution/distribution/v3/version.version=$v" ;;
    release-tools) # the release's Go tools in this repository (e2e/release/go): the OLM bundle validator
      METHOD=local ESTIMATE="~2-4 min cold (Kubernetes API types), seconds with a warm Go cache"
      MODULE=pmem-csi.local/release
      PKGS=(./cmd/pmem-csi-bundle-validate)
      LDFLAGS+=" -X main.version=$v" ;;
    kubernetes | kubelet | kubernetes-e2e)
      METHOD=wrapper REPLACES=staging
      ESTIMATE="~15-40 min, depending on the load"
      [[ "$tool" == kubelet ]] && ESTIMATE="~5-15 min (shares the control plane's Go build cache)"
      MODULE=k8s.io/kubernetes
      PKGS=()
      local b
      if [[ "$tool" == kubernetes-e2e ]]; then
        # e2e.test is the test binary of test/e2e (its storage/external registers -storage.testdriver);
        # agnhost's main.Version is what `agnhost --version` says (the -X is a no-op for e2e.test).
        ESTIMATE="~10-25 min (test/e2e and its cloud providers; shares the control plane's Go build cache)"
        TESTPKG=k8s.io/kubernetes/test/e2e
        PKGS=(k8s.io/kubernetes/test/images/agnhost)
        LDFLAGS+=" -X main.Version=$AGNHOST_VERSION"
        # In the stamp: the image names are checked against this release when it is built.
        STAMP_EXTRA="e2e-images: $E2E_IMAGE_BUSYBOX $E2E_IMAGE_NGINX $E2E_IMAGE_JESSIE_DNSUTILS"
      else
        for b in ${BINS[$tool]}; do PKGS+=("k8s.io/kubernetes/cmd/$b"); done
      fi
      local minor="${v#v1.}"; minor="${minor%%.*}"
      for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        LDFLAGS+=" -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
      done ;;
    *) die "no recipe for $tool" ;;
  esac
}

GO_ID=""
go_identity() { # -> GO_ID, computed once
  if [[ -z "$GO_ID" ]]; then
    GO_ID="$(go env GOVERSION GOOS GOARCH 2>/dev/null | tr '\n' ' ' || true)"
    GO_ID="${GO_ID% }"
    [[ -n "$GO_ID" ]] || GO_ID="go-not-found"
  fi
}

# The exact build inputs -> STAMP. A cached tool whose stamp differs is rebuilt.
make_stamp() {
  local tool="$1" a b
  recipe "$tool"
  go_identity
  printf -v a 'recipe-revision: %s\ntool: %s\nversion: %s\ngo: %s\ncgo: 0\nmethod: %s\n' \
    "$RECIPE_REVISION" "$tool" "${VER[$tool]}" "$GO_ID" "$METHOD"
  printf -v b 'module: %s\nreplaces: %s\npackages: %s\nldflags: %s\nbinaries: %s\n' \
    "${MODULE:-(go install)}" "$REPLACES" "${PKGS[*]}" "$LDFLAGS" "${BINS[$tool]}"
  STAMP="$a$b"
  # Only when set, so that the stamps of tools built without tags stay what they were.
  [[ -z "$TAGS" ]] || STAMP+="tags: $TAGS"$'\n'
  [[ -z "$TESTPKG" ]] || STAMP+="test-binary: $TESTPKG"$'\n'
  [[ -z "$STAMP_EXTRA" ]] || STAMP+="$STAMP_EXTRA"$'\n'
}

is_cached() {
  local tool="$1" dir="$CACHE/$1/${VER[$1]}" b disk=""
  for b in ${BINS[$tool]}; do [[ -x "$dir/bin/$b" ]] || return 1; done
  [[ -f "$dir/stamp" ]] || return 1
  IFS= read -r -d '' disk <"$dir/stamp" || true
  make_stamp "$tool"
  [[ "$disk" == "$STAMP" ]]
}

# --- the build itself (runs as a separate process so that `set -e` holds) ---------------------
upstream_gomod() { # module@version -> path of its go.mod in the module cache
  go mod download -json "$1" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p'
}

write_wrapper_gomod() {
  local tool="$1" v="$2" gomod godebug gover
  gomod="$(upstream_gomod "$MODULE@$v")"
  [[ -f "$gomod" ]] || { echo "cannot find go.mod of $MODULE@$v"; return 1; }
  go mod init "pmem-csi-tools/$tool"
  # Keep the upstream GODEBUG defaults (the behaviour it was released with), not Go 1.26's.
  godebug="$(grep -E '^godebug ' "$gomod" || true)"
  if [[ -z "$godebug" ]]; then
    gover="$(sed -n 's/^go \([0-9]*\.[0-9]*\).*/\1/p' "$gomod")"
    godebug="godebug default=go$gover"
  fi
  printf '\n%s\n' "$godebug" >>go.mod
  case "$REPLACES" in
    none) ;;
    single-line) # copy `replace A => B vX` lines; local-directory replaces are meaningless here
      local re='^replace [^(]+=> [^./][^ ]* v[^ ]+[[:space:]]*$'
      grep -qE "$re" "$gomod" || { echo "no single-line replace in $gomod"; return 1; }
      grep -E "$re" "$gomod" >>go.mod ;;
    staging) # each `k8s.io/X v0.0.0` requirement -> the published k8s.io/X v0.<minor>.<patch>
      local sv="v0.${v#v1.}" n
      n="$(grep -cE '^[[:space:]]+k8s\.io/[a-z0-9-]+ v0\.0\.0$' "$gomod")"
      grep -E '^[[:space:]]+k8s\.io/[a-z0-9-]+ v0\.0\.0$' "$gomod" |
        awk -v sv="$sv" '{ print "replace " $1 " => " $1 " " sv }' >>go.mod
      echo "wrapper: $n staging modules replaced by $sv" ;;
  esac
  echo "---- wrapper go.mod (before go get)"; cat go.mod; echo "----"
}

# The release's own agnhost version (test/images/agnhost/VERSION) must be the pinned one, and its
# test/utils/image/manifest.go must name the suite's images as versions.env does: images.sh builds
# them under those names, and a pod asking for another name would wait for a pull that never comes.
check_e2e_images() { # <kubernetes version>
  local dir said ref name tag rc=0 manifest
  dir="$(go list -m -f '{{.Dir}}' "k8s.io/kubernetes")"
  said="$(tr -d '[:space:]' <"$dir/test/images/agnhost/VERSION")"
  [[ "$said" == "$AGNHOST_VERSION" ]] ||
    { echo "k8s.io/kubernetes $1 has agnhost $said (test/images/agnhost/VERSION), versions.env AGNHOST_VERSION=$AGNHOST_VERSION"; rc=1; }
  manifest="$dir/test/utils/image/manifest.go"
  grep -qF 'PromoterE2eRegistry:      "registry.k8s.io/e2e-test-images",' "$manifest" ||
    { echo "$manifest: the e2e test image registry is no longer registry.k8s.io/e2e-test-images"; rc=1; }
  for ref in "registry.k8s.io/e2e-test-images/agnhost:$AGNHOST_VERSION" "$E2E_IMAGE_BUSYBOX" "$E2E_IMAGE_NGINX" "$E2E_IMAGE_JESSIE_DNSUTILS"; do
    name="${ref#registry.k8s.io/e2e-test-images/}" tag="${ref##*:}"; name="${name%:*}"
    grep -qF "Config{list.PromoterE2eRegistry, \"$name\", \"$tag\"}" "$manifest" ||
      { echo "$manifest does not name $ref (versions.env): $(grep -F "\"$name\"" "$manifest" | head -n 2 | tr -s '\t ' ' ')"; rc=1; }
  done
  return "$rc"
}

build_child() { # <tool> <tmpdir>
  local tool="$1" out="$2" v="${VER[$1]}" bins
  read -ra bins <<<"${BINS[$tool]}"
  recipe "$tool"
  trap - EXIT INT TERM # the parent cleans up; default signal handling here
  local goflags
  goflags="$(go env GOFLAGS)" # keeps flags set with `go env -w` (GOFLAGS in the env would hide them)
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${goflags:+$goflags }-p=$GO_P"
  mkdir -p "$out/bin"
  echo "go: $(go version); GOFLAGS=$GOFLAGS"
  set -x
  case "$METHOD" in
    local) # go.mod and go.sum of the sources pin everything; -mod=readonly: never edit them here
      cd "${SRC_DIR[$tool]}"
      nice -n 19 go build -mod=readonly -trimpath -ldflags="$LDFLAGS" -o "$out/bin/" "${PKGS[@]}" ;;
    install)
      cd "$out"
      GOBIN="$out/bin" nice -n 19 go install ${TAGS:+"-tags=$TAGS"} -ldflags="$LDFLAGS" "${PKGS[@]/%/@$v}" ;;
    wrapper)
      mkdir -p "$out/work" && cd "$out/work"
      { set +x; } 2>/dev/null
      write_wrapper_gomod "$tool" "$v"
      set -x
      if [[ -n "$TESTPKG" ]]; then
        # -t: the go.sum entries of what the test files import too.
        nice -n 19 go get -t "${PKGS[@]/%/@$v}" "$TESTPKG@$v"
        [[ "$tool" != kubernetes-e2e ]] || check_e2e_images "$v"
        nice -n 19 go test -c -ldflags="$LDFLAGS" -o "$out/bin/${bins[0]}" "$TESTPKG"
        nice -n 19 go build -ldflags="$LDFLAGS" -o "$out/bin/" "${PKGS[@]}"
      elif [[ ${#PKGS[@]} -eq 1 ]]; then
        nice -n 19 go get "${PKGS[@]/%/@$v}"
        nice -n 19 go build -ldflags="$LDFLAGS" -o "$out/bin/${bins[0]}" "${PKGS[0]}"
      else
        nice -n 19 go get "${PKGS[@]/%/@$v}"
        nice -n 19 go build -ldflags="$LDFLAGS" -o "$out/bin/" "${PKGS[@]}"
      fi
      cp go.mod "$out/wrapper.go.mod"; cp go.sum "$out/wrapper.go.sum"
      cd "$out" && rm -rf "$out/work" ;;
  esac
  { set +x; } 2>/dev/null
  local b
  for b in "${bins[@]}"; do [[ -x "$out/bin/$b" ]] || { echo "build produced no $b"; exit 1; }; done
}

# Each binary must print the pinned version before the tool counts as built.
verify_binary() { # <binary> <path> <version> -> prints what it said; fails on a mismatch
  local b="$1" p="$2" v="$3" want said
  local args=(--version)
  case "$b" in
    csi-sanity) args=(-version) want="Version = $v" ;;
    promtool) want="promtool, version $PROMTOOL_RELEASE (branch: , revision: $v)" ;;
    kwok | kwokctl) want="${v#v}" ;;
    helm) args=(version --short) want="$v" ;;
    kustomize) args=(version) want="$v" ;;
    # no --version flag: it logs its version first, then fails on the missing kubeconfig
    csi-provisioner) args=(--csi-address=/nonexistent.sock --kubeconfig=/nonexistent) want="version=\"$v\"" ;;
    etcd) want="etcd Version: ${v#v}" ;;
    kubectl) args=(version --client) want="Client Version: $v" ;;
    e2e.test)
      # The External Storage loader must be in: its flag is what the k8s-storage tier passes.
      said="$(timeout 20 "$p" --help 2>&1 || true)"
      if [[ "$said" != *"-storage.testdriver"* ]]; then
        printf '%s --help does not mention -storage.testdriver:\n%s\n' "$p" "$(tail -n 5 <<<"$said")"
        return 1
      fi
      want="$v" ;;
    agnhost) want="version $AGNHOST_VERSION" ;;
    kubelet) want="Kubernetes $v" ;;
    coredns) args=(-version) want="CoreDNS-${v#v}" ;;
    syft) args=(version) want="${v#v}" ;;
    cosign) args=(version) want="$v" ;;
    registry) want="$v" ;;
    kube-*) want="Kubernetes $v" ;;
    *) want="$v" ;;
  esac
  said="$(timeout 20 "$p" "${args[@]}" 2>&1 || true)"
  if [[ "$said" != *"$want"* ]]; then
    printf '%s %s printed:\n%s\n(expected it to contain "%s")\n' "$p" "${args[*]}" "$said" "$want"
    return 1
  fi
  printf '%s\n' "$said" | grep -F -m1 -- "$want"
}

fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# CPU seconds (user+sys) used so far by reaped child processes, from the `times` builtin
# (run in this shell, not a subshell, hence the file) -> CPU_SECS.
child_cpu_secs() {
  local _ user sys f="$1"
  times >"$f"
  { read -r _ _; read -r user sys; } <"$f"
  rm -f "$f"
  CPU_SECS="$(
  awk -v u="$user" -v s="$sys" 'function sec(t,  m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t);
    sub(/s$/, "", t); return m * 60 + t } BEGIN { printf "%d", sec(u) + sec(s) }'
  )"
}

CLEANUP=() CHILD=""
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  local d
  if [[ -n "$CHILD" ]]; then # the build runs in its own session: stop it and its go processes
    kill -TERM -- "-$CHILD" 2>/dev/null || kill -TERM "$CHILD" 2>/dev/null || true
    wait "$CHILD" 2>/dev/null || true
  fi
  for d in "${CLEANUP[@]}"; do [[ -n "$d" ]] && { rm -rf "$d" 2>/dev/null || true; }; done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

FAILED=()
build_tool() {
  local tool="$1" v bins dir tdir lockfd tmp start secs log b state
  v="${VER[$tool]}" bins="${BINS[$tool]}"
  dir="$CACHE/$tool/$v" tdir="$CACHE/$tool"
  if is_cached "$tool"; then say "$tool $v cached"; return 0; fi
  mkdir -p "$tdir"
  exec {lockfd}>"$tdir/.$v.lock"
  if ! flock -n "$lockfd"; then
    say "$tool $v: waiting for another bootstrap that is building it"
    flock "$lockfd"
  fi
  if is_cached "$tool"; then say "$tool $v cached"; exec {lockfd}>&-; return 0; fi
  rm -rf "$tdir/.tmp-$v".* "$tdir/.old-$v".*   # left by a killed run; we hold the lock
  tmp="$(mktemp -d "$tdir/.tmp-$v.XXXXXX")"
  chmod 755 "$tmp"
  CLEANUP+=("$tmp")
  recipe "$tool"
  state=cold; [[ -e "$dir" ]] && state="stale stamp, rebuilding"
  local what="$tool"; [[ "$bins" != "$tool" ]] && what="$tool ($bins)"
  say "building $what $v ($state, $ESTIMATE)…"
  start=$SECONDS log="$tmp/build.log"
  local rc=0 cpu0 cpu
  child_cpu_secs "$tdir/.times.$$"; cpu0=$CPU_SECS
  setsid bash "$SELF" __build "$tool" "$tmp" >"$log" 2>&1 </dev/null &
  CHILD=$!
  wait "$CHILD" || rc=$?
  CHILD=""
  if [[ $rc -ne 0 ]]; then
    secs=$((SECONDS - start))
    cp "$log" "$tdir/$v.failed.log"
    say "FAILED building $tool $v after $(fmt_secs "$secs"); last lines of the go output (full log: $tdir/$v.failed.log):"
    tail -n 30 "$log" | sed 's/^/  | /' >&2
    FAILED+=("$tool"); exec {lockfd}>&-; return 1
  fi
  for b in $bins; do
    if ! verify_binary "$b" "$tmp/bin/$b" "$v" >>"$log" 2>&1; then
      cp "$log" "$tdir/$v.failed.log"
      say "FAILED: $b $v built but does not report its version (full log: $tdir/$v.failed.log):"
      tail -n 12 "$log" | sed 's/^/  | /' >&2
      FAILED+=("$tool"); exec {lockfd}>&-; return 1
    fi
  done
  child_cpu_secs "$tdir/.times.$$"
  secs=$((SECONDS - start)) cpu=$((CPU_SECS - cpu0))
  printf 'built: %s\nbuild-seconds: %s\ncpu-seconds: %s\ngo-p: %s\nload-average: %s\n' \
    "$(date -u +%FT%TZ)" "$secs" "$cpu" "$GO_P" "$(cut -d' ' -f1-3 /proc/loadavg)" >"$tmp/build-info"
  make_stamp "$tool"
  printf '%s' "$STAMP" >"$tmp/stamp" # written last: a directory with a stamp is complete
  if [[ -e "$dir" ]]; then mv "$dir" "$tdir/.old-$v.$$"; fi
  mv "$tmp" "$dir"
  rm -rf "$tdir/.old-$v.$$" "$tdir/$v.failed.log"
  say "built $tool $v in $(fmt_secs "$secs") (cpu $(fmt_secs "$cpu"), load $(cut -d' ' -f1 /proc/loadavg))"
  exec {lockfd}>&-
}

print_table() {
  local tool b v
  for tool in "$@"; do
    v="${VER[$tool]}"
    for b in ${BINS[$tool]}; do
      if is_cached "$tool"; then printf '%s %s %s\n' "$b" "$v" "$CACHE/$tool/$v/bin/$b"
      else printf '%s %s %s\n' "$b" "$v" "MISSING(build failed or not built)"; fi
    done
  done
}

print_env() {
  local tool b rc=0 name
  for tool in "$@"; do
    if ! is_cached "$tool"; then
      say "$tool ${VER[$tool]} is not built: run bash e2e/tools/bootstrap.sh $tool"
      rc=1; continue
    fi
    for b in ${BINS[$tool]}; do
      name="${b^^}"; name="${name//[-.]/_}" # e2e.test -> PMEM_CSI_E2E_TEST
      printf 'export PMEM_CSI_%s=%q\n' "$name" "$CACHE/$tool/${VER[$tool]}/bin/$b"
    done
  done
  return "$rc"
}

tools_from_args() {
  local a t seen=" "
  if [[ $# -eq 0 ]]; then echo "$TOOLS"; return; fi
  for a in "$@"; do
    t="$(resolve_tool "$a")"
    [[ "$seen" == *" $t "* ]] || seen+="$t "
  done
  echo "$seen"
}

# Tool lists are space-separated words by design.
# shellcheck disable=SC2086
main() {
  case "${1:-}" in
    __build) shift; build_child "$@"; return ;;
    --print-env) shift; local ts; ts="$(tools_from_args "$@")"; print_env $ts; return ;;
    --list)
      local t
      for t in $TOOLS; do printf '%s %s %s\n' "$t" "${VER[$t]}" "${BINS[$t]}"; done
      return ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$SELF"; return ;;
    -*) die "unknown option $1 (see --help)" ;;
  esac
  command -v go >/dev/null || die "go is not on PATH (Go 1.26 at /usr/local/go/bin is expected)"
  command -v flock >/dev/null || die "flock (util-linux) is missing"
  local ts tool start=$SECONDS
  ts="$(tools_from_args "$@")"
  go_identity
  say "cache $CACHE; $GO_ID; go build -p=$GO_P under nice -n 19"
  for tool in $ts; do build_tool "$tool" || true; done
  say "done in $(fmt_secs $((SECONDS - start)))"
  print_table $ts
  if [[ ${#FAILED[@]} -gt 0 ]]; then
    say "FAILED: ${FAILED[*]}"
    return 1
  fi
}

# One line: bash parses it whole, so editing this file during a run cannot inject commands.
main "$@"; exit $?
