// What a node driver does with each controller replica it is registered with (issue 17), for the
// tests that run two replicas: register with the node's inventory, and push the inventory with a
// renewal after a change (registry.proto RenewControllerRequest.inventory) — what lets a standby
// replica know the volumes the leader made, deleted or grown.
import * as grpc from '@grpc/grpc-js';
import type { registry } from '@pmem-csi/csi';
import { loadRegistry, type RegistryClient, unary } from '@pmem-csi/runtime';
import type { TestController } from './harness.js';
import type { ScriptedNode } from './scripted-node.js';

/** A registry client for the replica `tc` (the caller closes it). */
export function registryClient(tc: TestController): RegistryClient {
  return new (loadRegistry().pmemcsi.registry.v1.Registry)(tc.registryAddress, grpc.credentials.createInsecure());
}

/** One node's registration with one replica. */
export class NodeSession {
  registrationId = '';
  constructor(
    readonly client: RegistryClient,
    readonly node: ScriptedNode,
  ) {}

  async #wire(): Promise<{ capacity: registry.Capacity; inventory: registry.VolumeInventory }> {
    const c = await this.node.capacity();
    const volumes = await this.node.node.inventory();
    return {
      capacity: {
        max_volume_size: String(c.maxVolumeSize),
        available: String(c.available),
        managed: String(c.managed),
        total: String(c.total),
      },
      inventory: { count: String(volumes.length), volumes },
    };
  }

  async register(): Promise<void> {
    const { capacity, inventory } = await this.#wire();
    const reply = await unary<registry.RegisterControllerRequest, registry.RegisterControllerReply__Output>(
      this.client,
      this.client.RegisterController,
      {
        node_id: this.node.nodeId,
        endpoint: this.node.endpoint,
        capacity,
        device_mode: 'fake',
        version: 't',
        inventory,
      },
      { timeoutMs: 5000 },
    );
    this.registrationId = reply.registration_id;
  }

  /** The early renewal a node sends after a create, delete or expansion; `stale` sends an inventory without any volume. */
  async push(stale = false): Promise<void> {
    const { capacity, inventory } = await this.#wire();
    await unary<registry.RenewControllerRequest, registry.RenewControllerReply__Output>(
      this.client,
      this.client.RenewController,
      {
        node_id: this.node.nodeId,
        registration_id: this.registrationId,
        capacity,
        inventory: stale ? { count: '0', volumes: [] } : inventory,
      },
      { timeoutMs: 5000 },
    );
  }
}
