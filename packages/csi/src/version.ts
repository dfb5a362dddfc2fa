// The version of this PMEM-CSI build: what pmem-csi-driver --version and GetPluginInfo report, and
// the operator's own version (recorded on every object it builds). Driver and operator are released
// together. The image builds (deploy/images/*.Dockerfile) rewrite the line below with their VERSION
// build argument and check that it took; keep it one line of exactly this form.
export const DRIVER_VERSION = '0.1.0';
