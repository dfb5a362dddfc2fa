// @pmem-csi/csi: the CSI vocabulary that controller, node, driver and operator share (pure, no I/O):
// the message types of csi.v1 and of the registry (`csi.Volume`, `registry.Capacity`, generated
// from proto/*.proto), the wire shapes this package reads, domain errors, request plans, byte units,
// the capacity shape, volume and plugin capabilities, host tools per device mode, the version, the
// driver's flag schema and its V8 options per mode. Everything public is exported here; other
// packages import nothing deeper. The gRPC services (clients, handlers) are transport: runtime.
export type * as csi from './generated/csi-types.js';
export type * as registry from './generated/registry-types.js';
export * from './errors.js';
export * from './bytes.js';
export type * from './capacity.js';
export type * from './wire.js';
export * from './capabilities.js';
export * from './identity.js';
export * from './requests.js';
export * from './fs-minimum.js';
export * from './host-tools.js';
export * from './version.js';
export * from './driver-flags.js';
export * from './driver-flags-parse.js';
export * from './driver-args.js';
export * from './driver-runtime.js';
