// The registry gRPC service (registry.proto) that node drivers call over mutual TLS: validate the
// request at the edge (InvalidArgument naming the field), update the node registry, and make the
// node's volumes known on every (re)registration — from the inventory it sent, or by a listing
// (volumes/volume-reconciler.ts). Renewals are the hot path at scale (5,000 nodes renew every lease/3): they
// validate, touch one record and log nothing — unless the node pushes its inventory with one (after a
// create or delete, possibly made through another controller replica), which the reconciler then takes in. Registrations and
// renewals name the connection they came over (the call's peer), so that the registry can hold the lease by it
// (registry/lease-policy.ts). The peer check (client cert SAN
// `pmem-node-controller`) is injected as `authorize`, so this file does not depend on TLS details.
import type * as grpc from '@grpc/grpc-js';
import { adaptService, loadRegistry, type Logger, type RegistryHandlers } from '@pmem-csi/runtime';
import type { NodeRegistry } from '../registry/node-registry.js';
import { recordFromVolume, type Inventory, type VolumeReconciler } from '../volumes/volume-reconciler.js';
import { type Capacity, formatBytes, InvalidArgumentError, parseBytes, type registry } from '@pmem-csi/csi';

export interface RegistrationServiceDeps {
  readonly registry: NodeRegistry;
  readonly reconciler: VolumeReconciler;
  readonly log: Logger;
  /** Refuses peers that are not node drivers (throws PermissionDenied/Unauthenticated). */
  readonly authorize?: (call: grpc.ServerUnaryCall<unknown, unknown>) => void;
}

const ENDPOINT = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;

/** Check `host:port` (host name, IPv4, or [IPv6]); throws InvalidArgument naming the field. */
export function checkEndpoint(endpoint: string): string {
  const m = ENDPOINT.exec(endpoint);
  const port = m === null ? 0 : Number(m[1]);
  if (port < 1 || port > 65535) {
    throw new InvalidArgumentError(
      `endpoint ${JSON.stringify(endpoint)} must be host:port with a port from 1 to 65535 (e.g. 10.0.0.5:10001)`,
    );
  }
  return endpoint;
}

function required(value: string, field: string): string {
  if (value.trim() === '') throw new InvalidArgumentError(`${field} is required`);
  return value;
}

/** Parse a reported capacity; every field is a non-negative byte count. */
export function parseCapacity(capacity: registry.Capacity__Output): Capacity {
  return {
    maxVolumeSize: parseBytes(capacity.max_volume_size, 'capacity.max_volume_size'),
    available: parseBytes(capacity.available, 'capacity.available'),
    managed: parseBytes(capacity.managed, 'capacity.managed'),
    total: parseBytes(capacity.total, 'capacity.total'),
  };
}

function parseCount(value: string, field: string): number {
  const n = /^\d{1,15}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n))
    throw new InvalidArgumentError(`${field} must be a non-negative integer below 10^15, got ${JSON.stringify(value)}`);
  return n;
}

/** Parse a sent inventory; throws InvalidArgument naming the field (`inventory.volumes[2].volume_id`). */
export function parseInventory(nodeId: string, inventory: registry.VolumeInventory__Output): Inventory {
  const count = parseCount(inventory.count, 'inventory.count');
  if (inventory.volumes.length > count) {
    throw new InvalidArgumentError(
      `inventory.count (${count}) must not be smaller than the number of inventory.volumes (${inventory.volumes.length})`,
    );
  }
  const seen = new Set<string>();
  const records = inventory.volumes.map((volume, i) => {
    const field = `inventory.volumes[${i}]`;
    if (volume.volume_id === '') throw new InvalidArgumentError(`${field}.volume_id is required`);
    if (seen.has(volume.volume_id))
      throw new InvalidArgumentError(`${field}.volume_id ${JSON.stringify(volume.volume_id)} appears more than once`);
    seen.add(volume.volume_id);
    return recordFromVolume(nodeId, volume, `${field}.capacity_bytes`);
  });
  return { count, records };
}

function capacityFields(c: Capacity): Record<string, string> {
  return { maxVolumeSize: formatBytes(c.maxVolumeSize), available: formatBytes(c.available) };
}

/** The handlers of pmemcsi.registry.v1.Registry. */
export function createRegistrationService(deps: RegistrationServiceDeps): RegistryHandlers {
  const { registry, reconciler, log } = deps;
  return adaptService<RegistryHandlers>(
    'Registry',
    loadRegistry().pmemcsi.registry.v1.Registry.service,
    {
      RegisterController: async (req, ctx) => {
        const nodeId = required(req.node_id, 'node_id');
        const endpoint = checkEndpoint(required(req.endpoint, 'endpoint'));
        if (req.capacity === null) throw new InvalidArgumentError('capacity is required');
        const capacity = parseCapacity(req.capacity);
        const inventory = req.inventory === null ? undefined : parseInventory(nodeId, req.inventory);
        const reg = registry.register({
          nodeId,
          endpoint,
          capacity,
          deviceMode: req.device_mode,
          version: req.version,
          peer: ctx.peer,
        });
        const source = reconciler.nodeRegistered(reg, inventory);
        log.info(
          source.via === 'inventory'
            ? 'node registered with its volume inventory; node available'
            : 'node registered; listing its volumes',
          {
            node: nodeId,
            endpoint,
            previousEndpoint: reg.previousEndpoint,
            deviceMode: req.device_mode,
            version: req.version,
            leaseSeconds: reg.leaseSeconds,
            leaseHeldByConnection: reg.held,
            ...(source.via === 'inventory' ? { volumes: inventory?.count } : { why: source.why }),
            ...capacityFields(capacity),
          },
        );
        return { registration_id: reg.registrationId, lease_seconds: String(reg.leaseSeconds) };
      },
      RenewController: async (req, ctx) => {
        const nodeId = required(req.node_id, 'node_id');
        const registrationId = required(req.registration_id, 'registration_id');
        const capacity = req.capacity === null ? undefined : parseCapacity(req.capacity);
        const inventory = req.inventory === null ? undefined : parseInventory(nodeId, req.inventory);
        const leaseSeconds = registry.renew(nodeId, registrationId, capacity, ctx.peer);
        if (inventory !== undefined) {
          const outcome = reconciler.inventoryPushed(nodeId, registrationId, inventory);
          log.debug('node pushed its volume inventory', {
            node: nodeId,
            volumes: inventory.count,
            outcome: outcome.via,
            ...(outcome.via === 'listing' ? { why: outcome.why } : {}),
          });
        }
        return { lease_seconds: String(leaseSeconds) };
      },
      UnregisterController: async (req) => {
        const nodeId = required(req.node_id, 'node_id');
        const registrationId = required(req.registration_id, 'registration_id');
        registry.unregister(nodeId, registrationId);
        log.info('node unregistered; its volumes stay attributed to it', { node: nodeId });
        return {};
      },
    },
    { log, authorize: deps.authorize, quietMethods: ['RenewController'] },
  );
}
