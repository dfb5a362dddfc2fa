// Central CSI controller service, node registry and volume placement
