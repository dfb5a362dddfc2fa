// Certificates of the controller<->node mutual TLS: issuing (CA and leaves), inspection, the
// renewal rule and verification by a real handshake.
export * from './names.js';
export * from './generate.js';
export * from './inspect.js';
export * from './handshake.js';
