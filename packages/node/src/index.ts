// CSI node service, node-controller service, PMEM device managers and node state
