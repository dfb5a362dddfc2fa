// Filesystem and mount helpers of the node service (host tools through the command runner).
export * from './filesystem.js';
export * from './findmnt.js';
export * from './host-dir.js';
export * from './mount.js';
export * from './mount-options.js';
export * from './paths.js';
export * from './process-caps.js';
export * from './targets.js';
export * from './tool-options.js';
