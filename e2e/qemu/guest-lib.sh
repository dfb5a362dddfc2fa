# Shared by run-guest.sh (NVDIMM guests) and cxl/run-cxl-guest.sh (CXL guests): the command the
# guest's init runs, the persistent state disk, and one boot under a timeout with its exit code.
# Sourced (bash); each function names its caller's label ($ME) in its messages.

# write_command <results dir> <env K=V...> -- <command...>: /results/command.sh, which the guest's
# init runs from /repo (exports and arguments quoted for sh).
write_command() {
  local results="$1"; shift
  local envs=()
  while [[ $# -gt 0 && "$1" != -- ]]; do envs+=("$1"); shift; done
  shift
  {
    echo "# written by $ME"
    for e in "${envs[@]}"; do printf 'export %q\n' "$e"; done
    printf 'exec'; printf ' %q' "$@"; echo
  } >"$results/command.sh"
}

# make_state_disk <file>: a 64 MiB ext4 disk labelled pmemstate, made once; the guest's init mounts
# it (/dev/vdb) at /var/lib/pmem-csi.intel.com, so the node's state outlives the boot.
make_state_disk() {
  [[ -f "$1" ]] && return 0
  truncate -s 64M "$1"
  mkfs.ext4 -q -F -L pmemstate "$1"
}

# boot_guest <name> <timeout s> <results dir> -- <qemu command...>: runs QEMU with the guest console
# on stdout and in <results>/console-<name>.log, then exits like the guest's command did: its exit
# code, 124 when the boot timed out (naming the last console line), 125 without an exit code.
boot_guest() {
  local name="$1" timeout_s="$2" results="$3"; shift 4
  local console="$results/console-$name.log" start qrc elapsed last
  start=$(date +%s)
  set +e
  # stdin from /dev/null keeps QEMU from putting a terminal into raw mode.
  timeout --kill-after=15 "$timeout_s" nice -n 10 "$@" </dev/null 2>&1 | tee "$console"
  qrc=${PIPESTATUS[0]}
  set -e
  elapsed=$(( $(date +%s) - start ))
  [[ -f "$results/guest-timings" ]] && mv "$results/guest-timings" "$results/guest-timings-$name"
  echo "$ME: $name ended after ${elapsed}s (qemu exit $qrc)" >&2
  if [[ $qrc -eq 124 || $qrc -eq 137 ]]; then
    last=$(grep -a -v -e '^\s*$' -e '^qemu-system' "$console" | tail -n 1 | cut -c1-200)
    echo "$ME: TIMEOUT: guest $name did not power off within ${timeout_s}s; last console line: $last" >&2
    exit 124
  fi
  if [[ ! -s "$results/exit-code" ]]; then
    echo "$ME: guest $name ended without an exit code (qemu exit $qrc; kernel panic or init failure? see $console)" >&2
    exit 125
  fi
  exit "$(cat "$results/exit-code")"
}
