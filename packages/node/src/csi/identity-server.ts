// CSI Identity on the kubelet's socket: topology, online expansion when the device mode can grow
// volumes, and a probe that is ready once the node has reconciled its state.
import { createIdentityService as identityService, type IdentityHandlers, type Logger } from '@pmem-csi/runtime';

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
  return identityService({
    driverName: deps.driverName,
    version: deps.version,
    capabilities: [
      { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } },
      ...(deps.canExpand ? [{ volume_expansion: { type: 'ONLINE' as const } }] : []),
    ],
    ready: deps.ready,
    log: deps.log,
  });
}
