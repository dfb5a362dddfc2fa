// CSI Identity on the kubelet's socket: the driver name (node-driver-registrar registers the plugin
// under it), the capabilities of the node plugin (topology, and online expansion when the device
// mode can grow volumes) and a probe that is ready once the node has reconciled its state.
import { adaptService, loadCsi, type IdentityHandlers, type Logger } from '@pmem-csi/runtime';

export interface IdentityServiceDeps {
  readonly driverName: string;
  readonly version: string;
  /** Whether volumes can grow (advertises online expansion). */
  readonly canExpand: boolean;
  /** Whether the node is ready to serve (Probe). */
  readonly ready: () => boolean;
  readonly log: Logger;
}

/** The grpc-js handlers of csi.v1.Identity for the node plugin. */
export function createIdentityService(deps: IdentityServiceDeps): IdentityHandlers {
  return adaptService<IdentityHandlers>(
    'Identity',
    loadCsi().csi.v1.Identity.service,
    {
      GetPluginInfo: async () => ({ name: deps.driverName, vendor_version: deps.version }),
      GetPluginCapabilities: async () => ({
        capabilities: [
          { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } },
          ...(deps.canExpand ? [{ volume_expansion: { type: 'ONLINE' as const } }] : []),
        ],
      }),
      Probe: async () => ({ ready: { value: deps.ready() } }),
    },
    { log: deps.log, quietMethods: ['Probe', 'GetPluginInfo', 'GetPluginCapabilities'] },
  );
}
