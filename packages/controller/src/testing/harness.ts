// Test harness: a controller on a temporary unix socket plus a registry on 127.0.0.1, insecure
// credentials, an adjustable clock (to expire leases or end the settle period without sleeping),
// CSI clients, and helpers to start scripted nodes (the real node-controller service on fake
// devices, scripted-node.ts) that register and wait until they are available.
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { csi } from '@pmem-csi/csi';
import { type ControllerClient, type IdentityClient, loadCsi, unary } from '@pmem-csi/runtime';
import { startController, type ControllerOptions, type RunningController } from '../controller.js';
import { ScriptedNode, type ScriptedNodeOptions } from './scripted-node.js';

/** A clock whose offset tests move forward. */
export class TestClock {
  offsetMs = 0;
  readonly now = (): number => Date.now() + this.offsetMs;
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export interface TestController {
  readonly controller: RunningController;
  readonly csi: ControllerClient;
  readonly identity: IdentityClient;
  readonly registryAddress: string;
  readonly socket: string;
  readonly clock: TestClock;
  /** Stop clients and the controller; `keepDir` leaves the socket directory for a restart. */
  stop(keepDir?: boolean): Promise<void>;
}

export type TestControllerOptions = Partial<Omit<ControllerOptions, 'now'>> & {
  readonly clock?: TestClock;
  readonly dir?: string;
};

/** Start a controller with insecure credentials on a temporary socket (lease 30 s, settle 0 unless given). */
export async function startTestController(opts: TestControllerOptions = {}): Promise<TestController> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'pmem-ctl-'));
  const socket = join(dir, 'csi.sock');
  const clock = opts.clock ?? new TestClock();
  const controller = await startController({
    csiEndpoint: socket,
    registryAddress: '127.0.0.1:0',
    registryCredentials: grpc.ServerCredentials.createInsecure(),
    nodeCredentials: () => grpc.credentials.createInsecure(),
    // Leases expire through the clock (TestClock.advance), not by real time: no flaky expiry on a slow machine.
    leaseSeconds: 30,
    settleMs: 0,
    ...opts,
    now: clock.now,
  });
  const proto = loadCsi().csi.v1;
  const csiClient = new proto.Controller(`unix://${socket}`, grpc.credentials.createInsecure());
  const identity = new proto.Identity(`unix://${socket}`, grpc.credentials.createInsecure());
  return {
    controller,
    csi: csiClient,
    identity,
    registryAddress: `127.0.0.1:${controller.registryPort}`,
    socket,
    clock,
    stop: async (keepDir = false) => {
      csiClient.close();
      identity.close();
      await controller.stop();
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Poll `cond` every 20 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The state of a node in the controller's status. */
export function nodeState(tc: TestController, nodeId: string): string | undefined {
  return tc.controller.status().nodes.find((n) => n.nodeId === nodeId)?.state;
}

/** Start a scripted node, register it with the controller and wait until it is available. */
export async function startScriptedNode(tc: TestController, options: ScriptedNodeOptions): Promise<ScriptedNode> {
  const node = await ScriptedNode.create(options);
  await node.start();
  node.useRegistry(tc.registryAddress);
  await node.register();
  await waitFor(() => nodeState(tc, node.nodeId) === 'available', `node ${node.nodeId} to become available`);
  return node;
}

/** CreateVolume request with sensible defaults (mount, SINGLE_NODE_WRITER). */
export function createRequest(name: string, extra: Partial<csi.CreateVolumeRequest> = {}): csi.CreateVolumeRequest {
  return {
    name,
    volume_capabilities: [{ mount: { fs_type: 'ext4' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    ...extra,
  };
}

const TIMEOUT = { timeoutMs: 10_000 };

/** Typed unary calls of the controller's CSI service. */
export const call = {
  create: (c: ControllerClient, req: csi.CreateVolumeRequest) =>
    unary<csi.CreateVolumeRequest, csi.CreateVolumeResponse__Output>(c, c.CreateVolume, req, TIMEOUT),
  delete: (c: ControllerClient, volumeId: string) =>
    unary<csi.DeleteVolumeRequest, csi.DeleteVolumeResponse__Output>(
      c,
      c.DeleteVolume,
      { volume_id: volumeId },
      TIMEOUT,
    ),
  list: (c: ControllerClient, req: csi.ListVolumesRequest = {}) =>
    unary<csi.ListVolumesRequest, csi.ListVolumesResponse__Output>(c, c.ListVolumes, req, TIMEOUT),
  capacity: (c: ControllerClient, req: csi.GetCapacityRequest = {}) =>
    unary<csi.GetCapacityRequest, csi.GetCapacityResponse__Output>(c, c.GetCapacity, req, TIMEOUT),
  validate: (c: ControllerClient, req: csi.ValidateVolumeCapabilitiesRequest) =>
    unary<csi.ValidateVolumeCapabilitiesRequest, csi.ValidateVolumeCapabilitiesResponse__Output>(
      c,
      c.ValidateVolumeCapabilities,
      req,
      TIMEOUT,
    ),
  get: (c: ControllerClient, volumeId: string) =>
    unary<csi.ControllerGetVolumeRequest, csi.ControllerGetVolumeResponse__Output>(
      c,
      c.ControllerGetVolume,
      { volume_id: volumeId },
      TIMEOUT,
    ),
  expand: (c: ControllerClient, req: csi.ControllerExpandVolumeRequest) =>
    unary<csi.ControllerExpandVolumeRequest, csi.ControllerExpandVolumeResponse__Output>(
      c,
      c.ControllerExpandVolume,
      req,
      TIMEOUT,
    ),
  capabilities: (c: ControllerClient) =>
    unary<csi.ControllerGetCapabilitiesRequest, csi.ControllerGetCapabilitiesResponse__Output>(
      c,
      c.ControllerGetCapabilities,
      {},
      TIMEOUT,
    ),
};

/** The gRPC error of a call that must fail (fails the test when it succeeds). */
export async function failure(p: Promise<unknown>): Promise<{ code: string; details: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as grpc.ServiceError;
    return { code: grpc.status[e.code] ?? String(e.code), details: e.details };
  }
  throw new Error('expected the call to fail, but it succeeded');
}
