// The node side of the controller registry.
export * from './backoff.js';
export * from './classify.js';
export * from './registrar.js';
export * from './registrar-set.js';
export * from './resolver.js';
