// The csi-sanity plugin shim against stand-in node and controller servers on real unix sockets:
// merged plugin capabilities, Node calls forwarded with their errors intact, its own deadline named.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { csi } from '@pmem-csi/csi';
import {
  bindServer,
  createLogger,
  createServer,
  grpcAddress,
  type IdentityClient,
  loadCsi,
  type NodeClient,
  shutdownServer,
  unary,
} from '@pmem-csi/runtime';
import { mergePluginCapabilities, startPluginShim, type PluginShim } from './plugin-shim.js';

type Caps = csi.PluginCapability__Output[];
const service = (type: 'CONTROLLER_SERVICE' | 'VOLUME_ACCESSIBILITY_CONSTRAINTS'): csi.PluginCapability__Output => ({
  type: 'service',
  service: { type },
});
const expansion: csi.PluginCapability__Output = { type: 'volume_expansion', volume_expansion: { type: 'ONLINE' } };

function identity(name: string, caps: Caps): grpc.UntypedServiceImplementation {
  return {
    GetPluginInfo: (_c: unknown, cb: grpc.sendUnaryData<csi.GetPluginInfoResponse>) =>
      cb(null, { name, vendor_version: '1.0.0' }),
    GetPluginCapabilities: (_c: unknown, cb: grpc.sendUnaryData<csi.GetPluginCapabilitiesResponse>) =>
      cb(null, { capabilities: caps }),
    Probe: (_c: unknown, cb: grpc.sendUnaryData<csi.ProbeResponse>) => cb(null, { ready: { value: true } }),
  };
}

describe('mergePluginCapabilities', () => {
  it('lists each capability once, node first', () => {
    expect(
      mergePluginCapabilities(
        [service('VOLUME_ACCESSIBILITY_CONSTRAINTS'), expansion],
        [service('CONTROLLER_SERVICE'), service('VOLUME_ACCESSIBILITY_CONSTRAINTS')],
      ),
    ).toEqual([service('VOLUME_ACCESSIBILITY_CONSTRAINTS'), expansion, service('CONTROLLER_SERVICE')]);
  });
});

describe('plugin shim over unix sockets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plugin-shim-'));
  const servers: grpc.Server[] = [];
  let shim: PluginShim;
  let ids: IdentityClient;
  let node: NodeClient;
  let stageRequests: csi.NodeStageVolumeRequest__Output[] = [];

  beforeAll(async () => {
    const csiProto = loadCsi().csi.v1;
    const nodeServer = createServer();
    nodeServer.addService(
      csiProto.Identity.service,
      identity('pmem-csi.intel.com', [service('VOLUME_ACCESSIBILITY_CONSTRAINTS'), expansion]),
    );
    nodeServer.addService(csiProto.Node.service, {
      NodeGetInfo: (_c: unknown, cb: grpc.sendUnaryData<csi.NodeGetInfoResponse>) =>
        cb(null, {
          node_id: 'n1',
          max_volumes_per_node: '0',
          accessible_topology: { segments: { 'pmem-csi.intel.com/node': 'n1' } },
        }),
      NodeStageVolume: (
        c: grpc.ServerUnaryCall<csi.NodeStageVolumeRequest__Output, csi.NodeStageVolumeResponse>,
        cb: grpc.sendUnaryData<csi.NodeStageVolumeResponse>,
      ) => {
        stageRequests.push(c.request);
        const md = new grpc.Metadata();
        md.set('x-why', 'no such volume');
        cb({ code: grpc.status.NOT_FOUND, details: `volume "${c.request.volume_id}" not found`, metadata: md });
      },
      NodeGetVolumeStats: () => {
        /* never answers: the shim's own deadline must end the call */
      },
    } satisfies grpc.UntypedServiceImplementation);
    const controllerServer = createServer();
    controllerServer.addService(
      csiProto.Identity.service,
      identity('pmem-csi.intel.com', [service('CONTROLLER_SERVICE'), service('VOLUME_ACCESSIBILITY_CONSTRAINTS')]),
    );
    await bindServer(nodeServer, grpcAddress(join(dir, 'node.sock')), grpc.ServerCredentials.createInsecure());
    await bindServer(
      controllerServer,
      grpcAddress(join(dir, 'controller.sock')),
      grpc.ServerCredentials.createInsecure(),
    );
    servers.push(nodeServer, controllerServer);
    shim = await startPluginShim({
      socket: join(dir, 'shim.sock'),
      nodeSocket: join(dir, 'node.sock'),
      controllerSocket: join(dir, 'controller.sock'),
      log: createLogger({ level: 'error' }),
      callTimeoutMs: 2000,
    });
    ids = new csiProto.Identity(grpcAddress(shim.socket), grpc.credentials.createInsecure());
    node = new csiProto.Node(grpcAddress(shim.socket), grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    ids.close();
    node.close();
    await shim.close();
    await Promise.all(servers.map((s) => shutdownServer(s, 1000)));
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    stageRequests = [];
  });

  it('answers the union of node and controller plugin capabilities, so CONTROLLER_SERVICE appears', async () => {
    const caps = await unary(ids, ids.GetPluginCapabilities, {}, { timeoutMs: 5000 });
    expect(caps.capabilities).toEqual([
      service('VOLUME_ACCESSIBILITY_CONSTRAINTS'),
      expansion,
      service('CONTROLLER_SERVICE'),
    ]);
    expect((await unary(ids, ids.GetPluginInfo, {}, { timeoutMs: 5000 })).name).toBe('pmem-csi.intel.com');
    expect((await unary(ids, ids.Probe, {}, { timeoutMs: 5000 })).ready?.value).toBe(true);
  });

  it('forwards Node calls byte for byte', async () => {
    const info = await unary(node, node.NodeGetInfo, {}, { timeoutMs: 5000 });
    expect(info).toMatchObject({
      node_id: 'n1',
      accessible_topology: { segments: { 'pmem-csi.intel.com/node': 'n1' } },
    });
    expect(shim.calls.get('NodeGetInfo')).toBe(1);
  });

  it('passes errors through with their code, details and trailers', async () => {
    const err = await unary(
      node,
      node.NodeStageVolume,
      { volume_id: 'v-1', staging_target_path: '/s', volume_context: { a: 'b' } },
      { timeoutMs: 5000 },
    ).then(
      () => undefined,
      (e: unknown) => e as grpc.ServiceError,
    );
    expect(err?.code).toBe(grpc.status.NOT_FOUND);
    expect(err?.details).toBe('volume "v-1" not found');
    expect(err?.metadata.get('x-why')).toEqual(['no such volume']);
    expect(stageRequests.map((r) => [r.volume_id, r.staging_target_path, r.volume_context])).toEqual([
      ['v-1', '/s', { a: 'b' }],
    ]);
  });

  it('names what it waited for when the node does not answer in time', async () => {
    // The caller sets no deadline (as csi-sanity does): the shim's 2 s applies.
    const err = await new Promise<grpc.ServiceError | null>((resolve) => {
      node.NodeGetVolumeStats({ volume_id: 'v', volume_path: '/p' }, (e) => resolve(e));
    });
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(err?.details).toBe(
      `plugin shim: NodeGetVolumeStats on the node (${join(dir, 'node.sock')}) did not answer within 2 s`,
    );
  });

  it('refuses a socket it cannot listen on, naming it', async () => {
    const socket = join(dir, 'missing-dir', 'shim.sock');
    await expect(
      startPluginShim({
        socket,
        nodeSocket: join(dir, 'node.sock'),
        controllerSocket: join(dir, 'controller.sock'),
        log: createLogger({ level: 'error' }),
      }),
    ).rejects.toThrow(`plugin shim: cannot listen on ${socket}`);
  });
});
