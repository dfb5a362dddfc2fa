// The node's CSI services: node-controller (Controller for this node's volumes), Node and Identity.
export * from './access-request.js';
export * from './deps.js';
export * from './hooks.js';
export * from './node-controller-server.js';
export * from './node-server.js';
export {
  createOrFindVolume,
  csiVolume,
  deleteVolume,
  ephemeralVolumeId,
  findDevice,
  localVolumeId,
  parametersOf,
  type ExistingVolume,
  type VolumeSpec,
} from './volumes.js';
