// CSI Identity of the central controller: the driver name (= the CSIDriver object name, which
// external-provisioner checks), the controller service and topology-constrained volumes, and a
// probe that is ready once the servers run.
import { adaptService, loadCsi, type IdentityHandlers, type Logger } from '@pmem-csi/runtime';

export interface IdentityServiceDeps {
  readonly driverName: string;
  readonly vendorVersion: string;
  /** Whether the controller is serving (Probe). */
  readonly ready: () => boolean;
  readonly log: Logger;
}

/** The handlers of csi.v1.Identity. */
export function createIdentityService(deps: IdentityServiceDeps): IdentityHandlers {
  return adaptService<IdentityHandlers>(
    'Identity',
    loadCsi().csi.v1.Identity.service,
    {
      GetPluginInfo: async () => ({ name: deps.driverName, vendor_version: deps.vendorVersion }),
      GetPluginCapabilities: async () => ({
        capabilities: [{ service: { type: 'CONTROLLER_SERVICE' } }, { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } }],
      }),
      Probe: async () => ({ ready: { value: deps.ready() } }),
    },
    { log: deps.log, quietMethods: ['Probe', 'GetPluginInfo', 'GetPluginCapabilities'] },
  );
}
