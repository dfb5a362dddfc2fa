// The CSI Controller service that external-provisioner calls on the unix socket. This file is the
// locked layer (TopoLVM style): it validates, takes the per-name / per-id locks in the same tick
// (a conflicting concurrent call gets ABORTED and retries later, as the CSI spec wants) and
// delegates to the unlocked implementations. Methods we do not offer answer UNIMPLEMENTED through
// adaptService. No PUBLISH_UNPUBLISH_VOLUME: PMEM volumes need no attach (attachRequired: false).
// EXPAND_VOLUME: growth is routed to the owner node (expand-volume.ts); a node whose device mode
// cannot grow (direct) answers for itself.
import { adaptService, type ControllerHandlers, loadCsi, type Logger } from '@pmem-csi/runtime';
import { getCapacity } from './get-capacity.js';
import type { ControllerDeps } from './controller-deps.js';
import { createVolumeLocked, planControllerCreate } from './create-volume.js';
import { deleteVolumeLocked } from './delete-volume.js';
import { expandVolumeLocked, planExpand } from './expand-volume.js';
import { listVolumes } from './list-volumes.js';
import { type csi, requireField } from '@pmem-csi/csi';
import { controllerGetVolume, validateVolumeCapabilities } from './volume-queries.js';

/** Controller capabilities; SINGLE_NODE_MULTI_WRITER because every SINGLE_NODE_* mode is supported. */
export const CONTROLLER_CAPABILITIES = [
  'CREATE_DELETE_VOLUME',
  'LIST_VOLUMES',
  'GET_CAPACITY',
  'GET_VOLUME',
  'VOLUME_CONDITION',
  'SINGLE_NODE_MULTI_WRITER',
  'EXPAND_VOLUME',
] as const;

/** The handlers of csi.v1.Controller. */
export function createControllerService(deps: ControllerDeps, log: Logger): ControllerHandlers {
  return adaptService<ControllerHandlers>(
    'Controller',
    loadCsi().csi.v1.Controller.service,
    {
      ControllerGetCapabilities: async () => ({
        capabilities: CONTROLLER_CAPABILITIES.map((type) => ({ rpc: { type } })),
      }),
      CreateVolume: async (req, ctx) => {
        const plan = planControllerCreate(req, deps.defaultVolumeSize);
        return deps.nameLocks.withLocks([plan.name], 'volume name', () =>
          deps.volumeLocks.withLocks([plan.volumeId], 'volume', () => createVolumeLocked(deps, plan, ctx)),
        );
      },
      DeleteVolume: async (req: csi.DeleteVolumeRequest__Output, ctx) => {
        const volumeId = requireField(req.volume_id, 'volume_id');
        await deps.volumeLocks.withLocks([volumeId], 'volume', () => deleteVolumeLocked(deps, volumeId, ctx));
        return {};
      },
      ControllerExpandVolume: async (req, ctx) => {
        const plan = planExpand(req);
        return deps.volumeLocks.withLocks([plan.volumeId], 'volume', () => expandVolumeLocked(deps, plan, ctx));
      },
      ListVolumes: async (req) => listVolumes(deps, req),
      GetCapacity: async (req) => getCapacity(deps, req),
      ValidateVolumeCapabilities: async (req) => validateVolumeCapabilities(deps, req),
      ControllerGetVolume: async (req) => controllerGetVolume(deps, req),
    },
    { log, quietMethods: ['GetCapacity', 'ListVolumes', 'ControllerGetCapabilities', 'ControllerGetVolume'] },
  );
}
