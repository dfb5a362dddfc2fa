// The CSI Node service on the kubelet's unix socket. This file wires RPCs to their
// implementations (one file per concern: stage, publish, ephemeral, stats, expand); each RPC
// validates its fields and then takes the volume's lock in the same tick, so a conflicting
// concurrent call on one volume gets ABORTED and the kubelet retries it.
import { topologyKey } from '@pmem-csi/api';
import { adaptService, loadCsi, type NodeHandlers } from '@pmem-csi/runtime';
import type { csi } from '@pmem-csi/csi';
import { canExpand, type NodeServiceDeps } from '../volumes/deps.js';
import { expandVolumeRpc } from './node-expand.js';
import { publishVolumeRpc, unpublishVolumeRpc } from './node-publish.js';
import { stageVolumeRpc, unstageVolumeRpc } from './node-stage.js';
import { volumeStatsRpc } from './node-stats.js';

/** NodeGetCapabilities. */
export function nodeCapabilities(deps: Pick<NodeServiceDeps, 'dm'>): csi.NodeGetCapabilitiesResponse {
  const types = [
    'STAGE_UNSTAGE_VOLUME',
    'GET_VOLUME_STATS',
    'VOLUME_CONDITION',
    'SINGLE_NODE_MULTI_WRITER',
    ...(canExpand(deps) ? ['EXPAND_VOLUME' as const] : []),
  ] as const;
  return { capabilities: types.map((type) => ({ rpc: { type } })) };
}

/** NodeGetInfo: the node id and its topology segment; no per-node volume limit. */
export function nodeInfo(deps: Pick<NodeServiceDeps, 'driverName' | 'nodeId'>): csi.NodeGetInfoResponse {
  return {
    node_id: deps.nodeId,
    max_volumes_per_node: '0',
    accessible_topology: { segments: { [topologyKey(deps.driverName)]: deps.nodeId } },
  };
}

/** The grpc-js handlers of csi.v1.Node. */
export function createNodeService(deps: NodeServiceDeps): NodeHandlers {
  return adaptService<NodeHandlers>(
    'Node',
    loadCsi().csi.v1.Node.service,
    {
      NodeGetInfo: async () => nodeInfo(deps),
      NodeGetCapabilities: async () => nodeCapabilities(deps),
      NodeStageVolume: (req, ctx) => stageVolumeRpc(deps, req, ctx),
      NodeUnstageVolume: (req, ctx) => unstageVolumeRpc(deps, req, ctx),
      NodePublishVolume: (req, ctx) => publishVolumeRpc(deps, req, ctx),
      NodeUnpublishVolume: (req, ctx) => unpublishVolumeRpc(deps, req, ctx),
      NodeGetVolumeStats: (req, ctx) => volumeStatsRpc(deps, req, ctx),
      NodeExpandVolume: (req, ctx) => expandVolumeRpc(deps, req, ctx),
    },
    {
      log: deps.log.child({ service: 'node' }),
      quietMethods: ['NodeGetCapabilities', 'NodeGetInfo', 'NodeGetVolumeStats'],
    },
  );
}
