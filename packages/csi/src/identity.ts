// The CSI Identity of each plugin role, one implementation for both: the central controller offers
// the controller service, topology-constrained volumes and online expansion (ControllerExpandVolume
// grows a device while it is published; a direct-mode node refuses growth with OUT_OF_RANGE); a node
// plugin offers topology and, when its device mode can grow volumes, online expansion. A split node never advertises
// CONTROLLER_SERVICE: its controller side is reached by the central controller only, over mTLS.

/** Which plugin answers: the central controller, or a node (whose device mode may grow volumes). */
export type PluginRole = { readonly role: 'controller' } | { readonly role: 'node'; readonly canExpand: boolean };

/** One entry of GetPluginCapabilities (the csi.v1 PluginCapability message). */
export type PluginCapabilityEntry =
  | { readonly service: { readonly type: 'CONTROLLER_SERVICE' | 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } }
  | { readonly volume_expansion: { readonly type: 'ONLINE' } };

/** The capabilities a plugin in `plugin` role advertises. */
export function pluginCapabilities(plugin: PluginRole): PluginCapabilityEntry[] {
  const topology: PluginCapabilityEntry = { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } };
  const online: PluginCapabilityEntry = { volume_expansion: { type: 'ONLINE' } };
  if (plugin.role === 'controller') return [{ service: { type: 'CONTROLLER_SERVICE' } }, topology, online];
  return [topology, ...(plugin.canExpand ? [online] : [])];
}
