// Mutual TLS for the controller<->node gRPC traffic: file-backed, self-reloading server and
// channel credentials, and the per-call peer identity (DNS SAN) check.
export * from './material.js';
export * from './source.js';
export * from './peer.js';
export * from './refusal-log.js';
export * from './server-credentials.js';
export * from './channel-credentials.js';
