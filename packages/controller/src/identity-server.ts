// CSI Identity of the central controller: the controller service and topology-constrained volumes,
// and a probe that is ready once the servers run.
import { createIdentityService as identityService, type IdentityHandlers, type Logger } from '@pmem-csi/runtime';

export interface IdentityServiceDeps {
  readonly driverName: string;
  readonly vendorVersion: string;
  /** Whether the controller is serving (Probe). */
  readonly ready: () => boolean;
  readonly log: Logger;
}

/** The handlers of csi.v1.Identity. */
export function createIdentityService(deps: IdentityServiceDeps): IdentityHandlers {
  return identityService({
    driverName: deps.driverName,
    version: deps.vendorVersion,
    capabilities: [{ service: { type: 'CONTROLLER_SERVICE' } }, { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } }],
    ready: deps.ready,
    log: deps.log,
  });
}
