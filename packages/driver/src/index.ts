// The pmem-csi-driver binary (controller and node modes) and the local stack
