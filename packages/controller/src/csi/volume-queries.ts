// The read-only per-volume methods: ValidateVolumeCapabilities and ControllerGetVolume. They read
// the index in one synchronous step (no await), so they need no lock. An unknown volume is
// NOT_FOUND only when provably absent (controller-deps.ts lookupVolume), else UNAVAILABLE.
import { parseVolumeParameters } from '@pmem-csi/api';
import { lookupVolume, toCsiVolume, volumeCondition, type ControllerDeps } from './controller-deps.js';
import { capabilitiesProblem, type csi, InvalidArgumentError, requireField } from '@pmem-csi/csi';

function validationProblem(req: csi.ValidateVolumeCapabilitiesRequest__Output): string | undefined {
  const caps = capabilitiesProblem(req.volume_capabilities);
  if (caps !== undefined) return caps;
  const params = parseVolumeParameters(req.parameters, 'createVolume');
  if (!params.ok) return params.message;
  const context = parseVolumeParameters(req.volume_context, 'volumeContext');
  if (!context.ok) return context.message;
  if (Object.keys(req.mutable_parameters ?? {}).length > 0)
    return 'mutable_parameters are not supported by this driver';
  return undefined;
}

/** Confirm the capabilities when all are supported; otherwise an unconfirmed answer with the reason. */
export function validateVolumeCapabilities(
  deps: ControllerDeps,
  req: csi.ValidateVolumeCapabilitiesRequest__Output,
): csi.ValidateVolumeCapabilitiesResponse {
  const volumeId = requireField(req.volume_id, 'volume_id');
  if (req.volume_capabilities.length === 0)
    throw new InvalidArgumentError('volume_capabilities is required: give at least one capability');
  lookupVolume(deps, volumeId);
  const problem = validationProblem(req);
  if (problem !== undefined) return { confirmed: null, message: problem };
  return {
    confirmed: {
      volume_context: req.volume_context,
      volume_capabilities: req.volume_capabilities,
      parameters: req.parameters,
      mutable_parameters: {},
    },
    message: '',
  };
}

/** The volume with its condition (abnormal while its node is unreachable). */
export function controllerGetVolume(
  deps: ControllerDeps,
  req: csi.ControllerGetVolumeRequest__Output,
): csi.ControllerGetVolumeResponse {
  const rec = lookupVolume(deps, requireField(req.volume_id, 'volume_id'));
  return {
    volume: toCsiVolume(deps, rec),
    status: { published_node_ids: [], volume_condition: volumeCondition(deps, rec) },
  };
}
