// PmemCSIDeployment API types, defaults, validation, names and volume parameters (pure, no I/O)
