// Prometheus metrics shared by every component (prom-client): the per-process registry with
// process metrics and build_info, the CSI operations histogram (gRPC server interceptor) and the
// certificate expiry gauge. Components register their own series on the registry.
export * from './registry.js';
export * from './grpc.js';
export * from './certificates.js';
