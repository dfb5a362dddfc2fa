// Shared runtime: generated protocol types, gRPC server/client helpers, mutual TLS, error mapping, command runner, logging, locks, certificates
