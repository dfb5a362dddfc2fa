// The CSI Identity service, shared by the controller and the node plugin: the driver name (the
// CSIDriver object name that external-provisioner and node-driver-registrar check), the plugin's
// capabilities by role (@pmem-csi/csi pluginCapabilities), and a readiness probe.
import { pluginCapabilities, type PluginRole } from '@pmem-csi/csi';
import type { IdentityHandlers } from '../generated/csi/v1/Identity.js';
import type { Logger } from '../logger.js';
import { loadCsi } from './protos.js';
import { adaptService } from './server.js';

export interface IdentityOptions {
  readonly driverName: string;
  readonly version: string;
  /** Which plugin answers: its capabilities follow from the role. */
  readonly plugin: PluginRole;
  /** Whether the plugin is ready to serve (Probe). */
  readonly ready: () => boolean;
  readonly log: Logger;
}

/** The grpc-js handlers of csi.v1.Identity. */
export function createIdentityService(o: IdentityOptions): IdentityHandlers {
  return adaptService<IdentityHandlers>(
    'Identity',
    loadCsi().csi.v1.Identity.service,
    {
      GetPluginInfo: async () => ({ name: o.driverName, vendor_version: o.version }),
      GetPluginCapabilities: async () => ({ capabilities: pluginCapabilities(o.plugin) }),
      Probe: async () => ({ ready: { value: o.ready() } }),
    },
    { log: o.log, quietMethods: ['Probe', 'GetPluginInfo', 'GetPluginCapabilities'] },
  );
}
