#!/bin/sh
# In the guest: load the CXL drivers (the bookworm kernel ships them as modules; the tier's
# e2e/qemu/guest/init.sh loads only the NVDIMM ones) and wait until udev has the new devices.
for m in cxl_acpi cxl_pci cxl_port cxl_mem cxl_pmem; do
  modprobe "$m" || { echo "guest-cxl-modules: modprobe $m failed" >&2; exit 1; }
done
udevadm settle --timeout=60 || echo "guest-cxl-modules: udevadm settle timed out" >&2
# The endpoint ports are probed asynchronously after cxl_mem binds: wait for every memdev's.
i=0
while [ $i -lt 30 ]; do
  n_mem=$(ls -d /sys/bus/cxl/devices/mem* 2>/dev/null | wc -l)
  n_ep=$(ls -d /sys/bus/cxl/devices/endpoint* 2>/dev/null | wc -l)
  [ "$n_mem" -gt 0 ] && [ "$n_ep" -ge "$n_mem" ] && exit 0
  sleep 1; i=$((i + 1))
done
echo "guest-cxl-modules: $n_mem memdev(s), $n_ep endpoint(s) after 30 s" >&2
exit 1
