// Read-only RPCs of the node-controller service: capacity (free bytes and the largest volume that
// still fits, which is what placement needs), capability validation of an existing volume, and the
// capability list (EXPAND_VOLUME only when the device mode can grow a device: not direct).
import { parseVolumeParameters, topologyKey } from '@pmem-csi/api';
import { canExpand, type NodeServiceDeps } from '../volumes/deps.js';
import {
  capabilitiesProblem,
  checkCapabilities,
  checkParameters,
  requireField,
  InvalidArgumentError,
  NotFoundError,
  type csi,
} from '@pmem-csi/csi';
import { findDevice } from '../volumes/volumes.js';

/** ControllerGetCapabilities. */
export function controllerCapabilities(deps: NodeServiceDeps): csi.ControllerGetCapabilitiesResponse {
  const types = [
    'CREATE_DELETE_VOLUME',
    'LIST_VOLUMES',
    'GET_CAPACITY',
    'SINGLE_NODE_MULTI_WRITER',
    ...(canExpand(deps) ? ['EXPAND_VOLUME' as const] : []),
  ] as const;
  return { capabilities: types.map((type) => ({ rpc: { type } })) };
}

/** GetCapacity: zero for a topology segment of another node. */
export async function getCapacityRpc(
  deps: NodeServiceDeps,
  req: csi.GetCapacityRequest__Output,
  signal?: AbortSignal,
): Promise<csi.GetCapacityResponse> {
  checkCapabilities(req.volume_capabilities, false);
  checkParameters(req.parameters, 'createVolume');
  const key = topologyKey(deps.driverName);
  const wanted = req.accessible_topology?.segments[key];
  if (wanted !== undefined && wanted !== deps.nodeId)
    return { available_capacity: '0', maximum_volume_size: { value: '0' } };
  const cap = await deps.dm.getCapacity({ signal });
  return { available_capacity: String(cap.available), maximum_volume_size: { value: String(cap.maxVolumeSize) } };
}

/** ValidateVolumeCapabilities: confirmed when every capability and parameter is supported. */
export async function validateVolumeCapabilitiesRpc(
  deps: NodeServiceDeps,
  req: csi.ValidateVolumeCapabilitiesRequest__Output,
  signal?: AbortSignal,
): Promise<csi.ValidateVolumeCapabilitiesResponse> {
  const volumeId = requireField(req.volume_id, 'volume_id');
  if (req.volume_capabilities.length === 0)
    throw new InvalidArgumentError('volume_capabilities is required: give at least one capability');
  if ((await findDevice(deps.dm, volumeId, signal)) === undefined)
    throw new NotFoundError(`volume ${volumeId} does not exist on node ${deps.nodeId}`);
  const problem = capabilitiesProblem(req.volume_capabilities);
  if (problem !== undefined) return { message: problem };
  const params = parseVolumeParameters(req.parameters, 'createVolume');
  if (!params.ok) return { message: params.message };
  if (Object.keys(req.mutable_parameters ?? {}).length > 0)
    return { message: 'mutable_parameters are not supported by this driver' };
  return {
    confirmed: {
      volume_context: req.volume_context,
      volume_capabilities: req.volume_capabilities,
      parameters: req.parameters,
    },
    message: '',
  };
}
