// The controller's one way to the nodes: what it needs from the node-controller service of a node
// (csi.v1.Controller on the node's node-controller port, proto/registry.proto), as an interface.
// Two adapters implement it: grpc-node-port.ts (production: one gRPC client per node, mutual TLS)
// and in-process-node-port.ts (the node's own service functions in this process, no gRPC: tests).
// One contract suite (testing/node-port-contract.ts) holds both, and the controller's test node,
// to the real node's behaviour.
//
// Errors are domain errors that name the node (node-errors.ts): the node's own answers keep their
// CSI code; a node that cannot be reached is NodeUnreachableError (UNAVAILABLE). Whether a failed
// CreateVolume proves the volume was not made is isDefinitiveFailure(err), whatever the adapter.
import type { csi } from '@pmem-csi/csi';

/** Free space of a node as its GetCapacity reports it (what placement needs). */
export interface NodeCapacityAnswer {
  /** Free bytes. */
  readonly available: number;
  /** The largest volume the node can create now. */
  readonly maxVolumeSize: number;
}

/** A node's answer to ControllerExpandVolume. */
export interface NodeExpansionAnswer {
  /** The volume's size now (at least the required bytes; rounded up to the node's allocation unit). */
  readonly capacityBytes: number;
  /** Whether NodeExpandVolume must still grow what is on the device (the filesystem of a mount volume). */
  readonly nodeExpansionRequired: boolean;
}

/** What this controller sent to a node that may have changed its volumes. */
export interface NodeMutations {
  /** CreateVolume/DeleteVolume/ControllerExpandVolume calls started since this controller started. */
  readonly started: number;
  /** Of those, the ones still running. */
  readonly running: number;
}

export interface NodePort {
  /** Where node `nodeId` serves (from its registration); a new endpoint replaces the old one. No call is made. */
  connect(nodeId: string, endpoint: string): void;
  /**
   * Create the volume, or return the one the node has under that name when it is compatible
   * (idempotent by name). The size is at least required_bytes and at most limit_bytes (rounded up
   * to the node's allocation unit).
   * @throws InvalidArgumentError, OutOfRangeError (the request), AlreadyExistsError (the name with
   *   another size or parameters), ResourceExhaustedError (no room, or another node's topology),
   *   AbortedError (the same volume is busy, or the call was cancelled), NodeUnreachableError,
   *   DeadlineExceededError, InternalError
   */
  createVolume(nodeId: string, req: csi.CreateVolumeRequest, signal?: AbortSignal): Promise<csi.Volume__Output>;
  /**
   * Delete the volume: 'deleted' — also for an id the node does not know (it treats delete as
   * idempotent) — or 'notFound' when the node answers NOT_FOUND.
   * @throws InvalidArgumentError, FailedPreconditionError (in use), AbortedError, NodeUnreachableError,
   *   DeadlineExceededError, InternalError
   */
  deleteVolume(nodeId: string, volumeId: string, signal?: AbortSignal): Promise<'deleted' | 'notFound'>;
  /**
   * Grow the volume to at least required_bytes (never shrinks: a volume already that big answers
   * with its current size, idempotent).
   * @throws InvalidArgumentError (the request), NotFoundError (the node does not have the volume),
   *   OutOfRangeError (limit_bytes below the resulting size, not enough free space for the growth,
   *   or a volume that cannot grow in the node's device mode), ResourceExhaustedError (a node of
   *   an older version out of space), FailedPreconditionError, UnimplementedError (a node that
   *   cannot grow volumes at all), AbortedError (the same volume is busy, or the call was cancelled),
   *   NodeUnreachableError, DeadlineExceededError, InternalError
   */
  expandVolume(
    nodeId: string,
    req: csi.ControllerExpandVolumeRequest,
    signal?: AbortSignal,
  ): Promise<NodeExpansionAnswer>;
  /** The node's free bytes and largest possible volume now. @throws NodeUnreachableError, DeadlineExceededError, InternalError */
  getCapacity(nodeId: string, signal?: AbortSignal): Promise<NodeCapacityAnswer>;
  /** Every volume of the node (all pages, each page with its own deadline). @throws NodeUnreachableError, AbortedError, InternalError */
  listVolumes(nodeId: string, signal?: AbortSignal): Promise<csi.Volume__Output[]>;
  /** CreateVolume/DeleteVolume/ControllerExpandVolume calls sent to the node (the volume reconciler trusts an inventory only without them). */
  mutations(nodeId: string): NodeMutations;
  /** Forget the node's endpoint (and close what the adapter holds for it). */
  close(nodeId: string): void;
  /** Forget every node. */
  closeAll(): void;
}
