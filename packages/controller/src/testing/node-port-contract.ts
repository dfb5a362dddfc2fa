// The contract of the controller → node port (nodes/node-port.ts), as one jest suite that runs
// against every way the controller can reach a node: the gRPC adapter talking to the node's real
// node-controller server, the in-process adapter around the node's own functions, and both on the
// scripted node the controller's other tests use — so that those tests run on the real node's
// behaviour. The node is the node package's node-controller service on fake devices
// (@pmem-csi/node/testing): what is asserted here is what a node does, seen through the port.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { volumeIdForName } from '@pmem-csi/api';
import {
  AbortedError,
  AlreadyExistsError,
  type csi,
  InvalidArgumentError,
  NotFoundError,
  OutOfRangeError,
  ResourceExhaustedError,
  MiB,
} from '@pmem-csi/csi';
import { isDefinitiveFailure, NodeUnreachableError } from '../nodes/node-errors.js';
import type { NodePort } from '../nodes/node-port.js';

/** One node behind a port, set up by a subject factory. */
export interface NodePortSubject {
  readonly port: NodePort;
  /** The node's id; the port is connected to it. */
  readonly nodeId: string;
  /** An endpoint where no node serves (for the unreachable cases). */
  readonly deadEndpoint: string;
  close(): Promise<void>;
}

/** What the factory must give the node (the suite's expectations depend on it). */
export interface NodePortSetup {
  readonly nodeId: string;
  /** Bytes of the node's pool. */
  readonly totalBytes: number;
  /** Its allocation unit. */
  readonly granularity: number;
  /** Entries per ListVolumes page the port asks for. */
  readonly listPageSize: number;
}

const SETUP: NodePortSetup = { nodeId: 'n1', totalBytes: 64 * MiB, granularity: 4 * MiB, listPageSize: 2 };

function request(
  name: string,
  required: number,
  extra: Partial<csi.CreateVolumeRequest> = {},
): csi.CreateVolumeRequest {
  return {
    name,
    capacity_range: { required_bytes: String(required) },
    volume_capabilities: [{ mount: { fs_type: 'ext4' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    ...extra,
  };
}

const MOUNT: csi.VolumeCapability = { mount: { fs_type: 'ext4' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } };
const BLOCK: csi.VolumeCapability = { block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } };

function expansion(
  volumeId: string,
  required: number,
  extra: Partial<csi.ControllerExpandVolumeRequest> = {},
): csi.ControllerExpandVolumeRequest {
  return {
    volume_id: volumeId,
    capacity_range: { required_bytes: String(required) },
    volume_capability: MOUNT,
    ...extra,
  };
}

/** The error of a call that must fail. */
async function failureOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    if (err instanceof Error) return err;
    throw new Error(`the port threw a non-Error: ${String(err)}`);
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Define the contract suite for the ports `make` sets up (a new node for every test). */
export function describeNodePortContract(name: string, make: (setup: NodePortSetup) => Promise<NodePortSubject>): void {
  describe(`NodePort contract: ${name}`, () => {
    const { nodeId, totalBytes, granularity } = SETUP;
    let s: NodePortSubject;
    let port: NodePort;

    beforeEach(async () => {
      s = await make(SETUP);
      port = s.port;
    });
    afterEach(async () => {
      await s.close();
    });

    const ids = async (): Promise<string[]> => (await port.listVolumes(nodeId)).map((v) => v.volume_id);

    it('creates the volume under its deterministic id, the size rounded up to the allocation unit', async () => {
      const volume = await port.createVolume(nodeId, request('pvc-1', granularity + 1));
      expect(volume).toMatchObject({
        volume_id: volumeIdForName('pvc-1'),
        capacity_bytes: String(2 * granularity),
        volume_context: { name: 'pvc-1', deviceMode: 'fake', usage: 'AppDirect' },
      });
      expect(await ids()).toEqual([volumeIdForName('pvc-1')]);
    });

    it('is idempotent by name: a compatible request returns the same volume and takes no more space', async () => {
      const first = await port.createVolume(nodeId, request('pvc-1', granularity));
      const again = await port.createVolume(
        nodeId,
        request('pvc-1', 1, { capacity_range: { required_bytes: '1', limit_bytes: String(granularity) } }),
      );
      expect(again).toEqual(first);
      expect(await port.getCapacity(nodeId)).toEqual({
        available: totalBytes - granularity,
        maxVolumeSize: totalBytes - granularity,
      });
    });

    it('refuses the name with another size or usage: ALREADY_EXISTS naming the node, definitive', async () => {
      await port.createVolume(nodeId, request('pvc-1', granularity));
      for (const other of [
        request('pvc-1', 2 * granularity),
        request('pvc-1', granularity, { parameters: { usage: 'FileIO' } }),
      ]) {
        const err = await failureOf(port.createVolume(nodeId, other));
        expect(err).toBeInstanceOf(AlreadyExistsError);
        expect(err.message).toMatch(/^node "n1": volume "pvc-1" \(id .+\) already exists, but it has /);
        expect(isDefinitiveFailure(err)).toBe(true);
      }
      expect(await ids()).toEqual([volumeIdForName('pvc-1')]);
    });

    it('refuses a volume larger than the free space: RESOURCE_EXHAUSTED, definitive, nothing left behind', async () => {
      await port.createVolume(nodeId, request('pvc-1', totalBytes / 2));
      const err = await failureOf(port.createVolume(nodeId, request('pvc-2', totalBytes / 2 + 1)));
      expect(err).toBeInstanceOf(ResourceExhaustedError);
      expect(err.message).toMatch(
        /^node "n1": not enough space for volume .+ the largest size available is 33554432 bytes/,
      );
      expect(isDefinitiveFailure(err)).toBe(true);
      expect(await ids()).toEqual([volumeIdForName('pvc-1')]);
      expect((await port.getCapacity(nodeId)).available).toBe(totalBytes / 2);
    });

    it('refuses a size the rounding pushes above limit_bytes: OUT_OF_RANGE, nothing left behind', async () => {
      const err = await failureOf(
        port.createVolume(nodeId, request('pvc-1', 1, { capacity_range: { required_bytes: '1', limit_bytes: '1' } })),
      );
      expect(err).toBeInstanceOf(OutOfRangeError);
      expect(err.message).toMatch(/above capacity_range\.limit_bytes 1$/);
      expect(await ids()).toEqual([]);
      expect((await port.getCapacity(nodeId)).available).toBe(totalBytes);
    });

    it('refuses invalid requests with INVALID_ARGUMENT naming the field and the node', async () => {
      const cases: Array<[csi.CreateVolumeRequest, string]> = [
        [request('', granularity), 'node "n1": name is required'],
        [
          request('pvc-1', granularity, { volume_capabilities: [] }),
          'node "n1": volume_capabilities is required: give at least one capability',
        ],
        [
          request('pvc-1', granularity, { capacity_range: { required_bytes: '-1' } }),
          'node "n1": capacity_range.required_bytes must not be negative, got -1',
        ],
      ];
      for (const [req, message] of cases) {
        const err = await failureOf(port.createVolume(nodeId, req));
        expect([err.constructor.name, err.message]).toEqual([InvalidArgumentError.name, message]);
        expect(isDefinitiveFailure(err)).toBe(true);
      }
      const unknown = await failureOf(port.createVolume(nodeId, request('pvc-1', 1, { parameters: { foo: 'bar' } })));
      expect(unknown).toBeInstanceOf(InvalidArgumentError);
      expect(unknown.message).toMatch(/^node "n1": .*parameter "foo" is not allowed/);
      const noId = await failureOf(port.deleteVolume(nodeId, ''));
      expect([noId.constructor.name, noId.message]).toEqual([
        InvalidArgumentError.name,
        'node "n1": volume_id is required',
      ]);
      expect(await ids()).toEqual([]);
    });

    it('deletes: the space comes back; a second delete and an unknown id are deleted too (idempotent)', async () => {
      const volume = await port.createVolume(nodeId, request('pvc-1', 3 * granularity));
      expect(await port.deleteVolume(nodeId, volume.volume_id)).toBe('deleted');
      expect(await port.getCapacity(nodeId)).toEqual({ available: totalBytes, maxVolumeSize: totalBytes });
      expect(await port.deleteVolume(nodeId, volume.volume_id)).toBe('deleted');
      expect(await port.deleteVolume(nodeId, volumeIdForName('never-made'))).toBe('deleted');
      expect(await ids()).toEqual([]);
    });

    it('lists every volume, sorted by id, across pages', async () => {
      const names = ['pvc-a', 'pvc-b', 'pvc-c', 'pvc-d', 'pvc-e'];
      for (const n of names) await port.createVolume(nodeId, request(n, granularity));
      const listed = await port.listVolumes(nodeId);
      expect(listed.map((v) => v.volume_id)).toEqual(names.map(volumeIdForName).sort());
      expect(listed.map((v) => v.capacity_bytes)).toEqual(names.map(() => String(granularity)));
      expect(listed.map((v) => v.volume_context['name']).sort()).toEqual(names);
    });

    it("moves the node's capacity with every create and delete", async () => {
      expect(await port.getCapacity(nodeId)).toEqual({ available: totalBytes, maxVolumeSize: totalBytes });
      const a = await port.createVolume(nodeId, request('pvc-a', 5 * granularity));
      await port.createVolume(nodeId, request('pvc-b', granularity));
      expect(await port.getCapacity(nodeId)).toEqual({
        available: totalBytes - 6 * granularity,
        maxVolumeSize: totalBytes - 6 * granularity,
      });
      await port.deleteVolume(nodeId, a.volume_id);
      expect((await port.getCapacity(nodeId)).available).toBe(totalBytes - granularity);
    });

    it('counts the creates, expansions and deletes sent to a node, and those still running; queries do not count', async () => {
      expect(port.mutations(nodeId)).toEqual({ started: 0, running: 0 });
      await port.getCapacity(nodeId);
      await port.listVolumes(nodeId);
      expect(port.mutations(nodeId)).toEqual({ started: 0, running: 0 });
      const pending = port.createVolume(nodeId, request('pvc-1', granularity));
      expect(port.mutations(nodeId)).toEqual({ started: 1, running: 1 });
      const volume = await pending;
      const growing = port.expandVolume(nodeId, expansion(volume.volume_id, 2 * granularity));
      expect(port.mutations(nodeId)).toEqual({ started: 2, running: 1 });
      await growing;
      await failureOf(port.expandVolume(nodeId, expansion(volumeIdForName('never-made'), granularity)));
      await port.deleteVolume(nodeId, volume.volume_id);
      await failureOf(port.createVolume(nodeId, request('', 1)));
      expect(port.mutations(nodeId)).toEqual({ started: 5, running: 0 });
    });

    it('grows a volume to the required size rounded up to the allocation unit; the growth leaves the free space', async () => {
      const volume = await port.createVolume(nodeId, request('pvc-1', granularity));
      expect(await port.expandVolume(nodeId, expansion(volume.volume_id, 2 * granularity + 1))).toEqual({
        capacityBytes: 3 * granularity,
        nodeExpansionRequired: true, // a mount volume: its filesystem grows on the node
      });
      expect((await port.listVolumes(nodeId)).map((v) => v.capacity_bytes)).toEqual([String(3 * granularity)]);
      expect(await port.getCapacity(nodeId)).toEqual({
        available: totalBytes - 3 * granularity,
        maxVolumeSize: totalBytes - 3 * granularity,
      });
      const raw = await port.createVolume(nodeId, request('pvc-2', granularity, { volume_capabilities: [BLOCK] }));
      expect(
        await port.expandVolume(nodeId, expansion(raw.volume_id, 2 * granularity, { volume_capability: BLOCK })),
      ).toEqual({ capacityBytes: 2 * granularity, nodeExpansionRequired: false }); // raw block: nothing on the node
    });

    it('is idempotent and never shrinks: the same size again, or a smaller one, answers the current size', async () => {
      const volume = await port.createVolume(nodeId, request('pvc-1', granularity));
      const grown = await port.expandVolume(nodeId, expansion(volume.volume_id, 3 * granularity));
      expect(await port.expandVolume(nodeId, expansion(volume.volume_id, 3 * granularity))).toEqual(grown);
      expect(await port.expandVolume(nodeId, expansion(volume.volume_id, 1))).toEqual({
        capacityBytes: 3 * granularity,
        nodeExpansionRequired: true,
      });
      expect((await port.getCapacity(nodeId)).available).toBe(totalBytes - 3 * granularity);
    });

    it('refuses a limit below the size the volume has: OUT_OF_RANGE naming the node and both sizes', async () => {
      const volume = await port.createVolume(nodeId, request('pvc-1', 2 * granularity));
      const err = await failureOf(
        port.expandVolume(
          nodeId,
          expansion(volume.volume_id, 1, {
            capacity_range: { required_bytes: '1', limit_bytes: String(granularity) },
          }),
        ),
      );
      expect(err).toBeInstanceOf(OutOfRangeError);
      expect(err.message).toMatch(
        new RegExp(`^node "n1": volume ${volume.volume_id} .*${2 * granularity} bytes.*limit_bytes ${granularity}\\b`),
      );
      expect((await port.listVolumes(nodeId)).map((v) => v.capacity_bytes)).toEqual([String(2 * granularity)]);
    });

    it('refuses a growth beyond the free space: OUT_OF_RANGE naming the node, the growth and the free bytes', async () => {
      const volume = await port.createVolume(nodeId, request('pvc-1', granularity));
      await port.createVolume(nodeId, request('pvc-2', totalBytes / 2));
      const err = await failureOf(port.expandVolume(nodeId, expansion(volume.volume_id, totalBytes / 2 + granularity)));
      expect(err).toBeInstanceOf(OutOfRangeError);
      expect(err.message).toMatch(
        new RegExp(
          `^node "n1": volume ${volume.volume_id} on node n1 cannot grow by ${totalBytes / 2} bytes .*` +
            `only ${totalBytes / 2 - granularity} bytes are free`,
        ),
      );
      expect((await port.getCapacity(nodeId)).available).toBe(totalBytes / 2 - granularity);
    });

    it('refuses an unknown volume with NOT_FOUND and an invalid request with INVALID_ARGUMENT, naming the node', async () => {
      const id = volumeIdForName('never-made');
      const unknown = await failureOf(port.expandVolume(nodeId, expansion(id, granularity)));
      expect([unknown.constructor.name, unknown.message]).toEqual([
        NotFoundError.name,
        `node "n1": volume ${id} does not exist on node n1`,
      ]);
      const volume = await port.createVolume(nodeId, request('pvc-1', granularity));
      const zero = await failureOf(port.expandVolume(nodeId, expansion(volume.volume_id, 0)));
      expect([zero.constructor.name, zero.message]).toEqual([
        InvalidArgumentError.name,
        'node "n1": capacity_range.required_bytes is required and must be greater than 0',
      ]);
    });

    it('a node without an endpoint, or whose endpoint nobody serves, is unreachable: UNAVAILABLE, not definitive', async () => {
      const none = await failureOf(port.createVolume('n9', request('pvc-1', granularity)));
      expect([none.constructor.name, none.message]).toEqual([
        NodeUnreachableError.name,
        'node "n9" is not reachable: no connection to its endpoint',
      ]);
      port.connect('n2', s.deadEndpoint);
      const dead = await failureOf(port.createVolume('n2', request('pvc-1', granularity)));
      expect(dead).toBeInstanceOf(NodeUnreachableError);
      expect(dead.message).toMatch(/^node "n2" is not reachable: .+/);
      expect(isDefinitiveFailure(dead)).toBe(false);
      await expect(port.getCapacity('n2')).rejects.toThrow(NodeUnreachableError);
      const expand = await failureOf(port.expandVolume('n2', expansion(volumeIdForName('pvc-1'), granularity)));
      expect(expand).toBeInstanceOf(NodeUnreachableError);
      expect(expand.message).toMatch(/^node "n2" is not reachable: .+/);
      port.close(nodeId);
      await expect(port.listVolumes(nodeId)).rejects.toThrow(
        'node "n1" is not reachable: no connection to its endpoint',
      );
    });

    it('a cancelled call is ABORTED and leaves the outcome open (not definitive)', async () => {
      const ac = new AbortController();
      ac.abort();
      const err = await failureOf(port.createVolume(nodeId, request('pvc-1', granularity), ac.signal));
      expect(err).toBeInstanceOf(AbortedError);
      expect(err.message).toMatch(/^CreateVolume on node "n1" was cancelled: /);
      expect(isDefinitiveFailure(err)).toBe(false);
    });
  });
}
