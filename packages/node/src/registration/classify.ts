// Why a call to the controller's registry failed, in words an operator can act on. The Go driver
// logged nothing useful when registration got stuck ("all SubConns in TransientFailure") or when a
// firewall blocked the port. grpc-js reports connection-level failures only as UNAVAILABLE with a
// text, so the text is inspected here — for the log line only; no decision depends on it.
import * as grpc from '@grpc/grpc-js';
import { codeName, isServiceError } from '@pmem-csi/runtime';
import { errorMessage } from '@pmem-csi/csi';

export type RegistryFailureReason =
  'tls' | 'connection-refused' | 'unreachable' | 'timeout' | 'not-found' | 'rejected' | 'cancelled' | 'other';

export interface RegistryFailure {
  readonly reason: RegistryFailureReason;
  /** gRPC code name, e.g. "UNAVAILABLE"; "NONE" for errors that did not come from gRPC. */
  readonly code: string;
  /** What gRPC (or the thrower) said. */
  readonly detail: string;
  /** What to check. */
  readonly hint: string;
}

const TLS_TEXT =
  /handshake|ssl|tls|certificate|self[- ]signed|wrong version number|alert|unable to (get|verify)|DNS SAN/i;
const REFUSED_TEXT = /ECONNREFUSED/;

const HINTS: Record<RegistryFailureReason, string> = {
  tls: 'TLS handshake failed: check the CA bundle, the node and registry certificates (SANs pmem-node-controller / pmem-registry) and their expiry',
  'connection-refused':
    'nothing accepts connections at the registry address: is the controller running, and is the address/port right?',
  unreachable: 'the registry address cannot be reached (name resolution, routing or a firewall)',
  timeout:
    'no answer before the deadline: a firewall dropping packets to the registry port, or an overloaded controller',
  'not-found': 'the controller does not know this registration (it restarted); registering again',
  rejected: 'the controller refused this node: its client certificate identity is not accepted',
  cancelled: 'the call was cancelled (shutting down)',
  other: 'the controller answered with an error',
};

function unavailableReason(details: string): RegistryFailureReason {
  if (REFUSED_TEXT.test(details)) return 'connection-refused';
  if (TLS_TEXT.test(details)) return 'tls';
  return 'unreachable';
}

function reasonOf(code: grpc.status, details: string): RegistryFailureReason {
  switch (code) {
    case grpc.status.UNAVAILABLE:
      return unavailableReason(details);
    case grpc.status.DEADLINE_EXCEEDED:
      return 'timeout';
    case grpc.status.NOT_FOUND:
      return 'not-found';
    case grpc.status.UNAUTHENTICATED:
    case grpc.status.PERMISSION_DENIED:
      return 'rejected';
    case grpc.status.CANCELLED:
      return 'cancelled';
    default:
      return 'other';
  }
}

/** Classify the error of a registry call. */
export function classifyRegistryError(err: unknown): RegistryFailure {
  if (!isServiceError(err)) return { reason: 'other', code: 'NONE', detail: errorMessage(err), hint: HINTS.other };
  const detail = err.details.trim();
  const reason = reasonOf(err.code, detail);
  return { reason, code: codeName(err.code), detail, hint: HINTS[reason] };
}

/** Whether the channel should be rebuilt before the next attempt (connection-level trouble). */
export function needsNewChannel(failure: RegistryFailure): boolean {
  return (
    failure.reason === 'tls' ||
    failure.reason === 'connection-refused' ||
    failure.reason === 'unreachable' ||
    failure.reason === 'timeout'
  );
}
