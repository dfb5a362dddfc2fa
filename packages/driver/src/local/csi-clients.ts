// CSI clients of the local stack's demonstration: the controller socket (as external-provisioner
// uses it) and each node's socket (as kubelet uses it). Every call has a deadline.
import * as grpc from '@grpc/grpc-js';
import type { csi } from '@pmem-csi/csi';
import { type ControllerClient, grpcAddress, loadCsi, type NodeClient, unary } from '@pmem-csi/runtime';

/** The deadline of every call (named in the demonstration's progress lines). */
export const CSI_CALL_TIMEOUT_MS = 120_000;
const TIMEOUT_MS = CSI_CALL_TIMEOUT_MS;

export class ControllerCsi {
  readonly #c: ControllerClient;
  constructor(socket: string) {
    this.#c = new (loadCsi().csi.v1.Controller)(grpcAddress(socket), grpc.credentials.createInsecure());
  }
  createVolume(req: csi.CreateVolumeRequest): Promise<csi.CreateVolumeResponse__Output> {
    return unary(this.#c, this.#c.CreateVolume, req, { timeoutMs: TIMEOUT_MS });
  }
  deleteVolume(volumeId: string): Promise<csi.DeleteVolumeResponse__Output> {
    return unary(this.#c, this.#c.DeleteVolume, { volume_id: volumeId }, { timeoutMs: TIMEOUT_MS });
  }
  listVolumes(req: csi.ListVolumesRequest = {}): Promise<csi.ListVolumesResponse__Output> {
    return unary(this.#c, this.#c.ListVolumes, req, { timeoutMs: TIMEOUT_MS });
  }
  getCapacity(req: csi.GetCapacityRequest = {}): Promise<csi.GetCapacityResponse__Output> {
    return unary(this.#c, this.#c.GetCapacity, req, { timeoutMs: TIMEOUT_MS });
  }
  close(): void {
    this.#c.close();
  }
}

export class NodeCsi {
  readonly #c: NodeClient;
  constructor(socket: string) {
    this.#c = new (loadCsi().csi.v1.Node)(grpcAddress(socket), grpc.credentials.createInsecure());
  }
  stage(req: csi.NodeStageVolumeRequest): Promise<csi.NodeStageVolumeResponse__Output> {
    return unary(this.#c, this.#c.NodeStageVolume, req, { timeoutMs: TIMEOUT_MS });
  }
  publish(req: csi.NodePublishVolumeRequest): Promise<csi.NodePublishVolumeResponse__Output> {
    return unary(this.#c, this.#c.NodePublishVolume, req, { timeoutMs: TIMEOUT_MS });
  }
  stats(volumeId: string, path: string): Promise<csi.NodeGetVolumeStatsResponse__Output> {
    return unary(
      this.#c,
      this.#c.NodeGetVolumeStats,
      { volume_id: volumeId, volume_path: path },
      { timeoutMs: TIMEOUT_MS },
    );
  }
  unpublish(volumeId: string, target: string): Promise<csi.NodeUnpublishVolumeResponse__Output> {
    return unary(
      this.#c,
      this.#c.NodeUnpublishVolume,
      { volume_id: volumeId, target_path: target },
      { timeoutMs: TIMEOUT_MS },
    );
  }
  unstage(volumeId: string, staging: string): Promise<csi.NodeUnstageVolumeResponse__Output> {
    return unary(
      this.#c,
      this.#c.NodeUnstageVolume,
      { volume_id: volumeId, staging_target_path: staging },
      { timeoutMs: TIMEOUT_MS },
    );
  }
  close(): void {
    this.#c.close();
  }
}

/** A single-node-writer mount capability with the given filesystem. */
export function mountCapability(fsType: string): csi.VolumeCapability {
  return { mount: { fs_type: fsType, mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } };
}
