#!/bin/sh
# PID 1 of the pmem-csi QEMU guest, stage 2 (stage 1 is /sbin/pmem-init, baked into the image by
# build-image.sh: it mounted /proc, /sys, /dev and the 9p shares /repo (read-only) and /results,
# then exec'ed this script from the shared repository, so changing the flow needs no new image).
# Loads the PMEM, device-mapper and filesystem modules, starts udevd for block/nd/dax devices,
# mounts the persistent state disk, runs /results/command.sh (written by run-guest.sh) from /repo
# with its output on the console, writes its exit code to /results/exit-code and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TMPDIR=/tmp LANG=C.UTF-8 PMEM_CSI_GUEST=1
# Not interactive: Jest prints plain progress instead of redrawing a status line on the console.
export CI=true TERM=dumb FORCE_COLOR=0
STATE_DIR=/var/lib/pmem-csi.intel.com

uptime_s() { cut -d' ' -f1 /proc/uptime; }
log() { echo "guest[$(uptime_s)s]: $*" >/dev/console; }
timing() { echo "$1 $(uptime_s)" >>/results/guest-timings; }
off() {
  sync
  umount "$STATE_DIR" 2>/dev/null
  umount /cache 2>/dev/null
  umount /results 2>/dev/null
  sync
  echo o >/proc/sysrq-trigger
  sleep 60
}
trap off EXIT

timing init
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/lvm /run/udev /run/lock
hostname pmem-guest 2>/dev/null

# nfit: the NVDIMM bus; nd_pmem: fsdax/raw block devices; nd_btt: sector mode; dax_pmem: devdax.
for m in nfit nd_pmem nd_btt dax_pmem dm_mod dm_snapshot xfs loop; do
  modprobe -q "$m" || log "modprobe $m failed"
done

# udevd for the devices the tests create (LVM's /dev/<vg>/<lv> links, pmem and dax nodes).
/lib/systemd/systemd-udevd --daemon --resolve-names=never >/dev/null 2>&1 || log "systemd-udevd did not start"
udevadm trigger --action=add --subsystem-match=block --subsystem-match=nd --subsystem-match=dax --subsystem-match=misc
udevadm settle --timeout=60 || log "udevadm settle timed out"
timing udev

# Optional host directory for caches that outlive a boot (Jest's transform cache).
mkdir -p /cache
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 cache /cache 2>/dev/null || rmdir /cache

if [ -b /dev/vdb ]; then
  mkdir -p "$STATE_DIR"
  mount -t ext4 /dev/vdb "$STATE_DIR" || log "cannot mount the state disk /dev/vdb"
fi

log "ready: kernel $(uname -r), $(grep -c . /proc/cpuinfo >/dev/null; nproc) cpu, $(ndctl list --regions 2>/dev/null | grep -c '"dev"') PMEM region(s)"
timing command-start
cd /repo || exit 1
/bin/sh /results/command.sh </dev/null >/dev/console 2>&1
rc=$?
timing command-end
log "command exited with $rc"
echo "$rc" >/results/exit-code
exit 0
