// After a create or delete on a node, ask that node for its capacity at once instead of waiting for
// its next renewal (a third of the lease later): GetCapacity answers and the next placement then
// see the space the operation took or freed. Best effort: a failure keeps the old estimate, which
// the renewal corrects, and a RESOURCE_EXHAUSTED from a node makes placement try the next one.
import { errorMessage, type Logger } from '@pmem-csi/runtime';
import type { ControllerDeps } from './controller-deps.js';

/** Refresh the capacity estimate of `nodeId`; never throws. */
export async function refreshCapacity(deps: ControllerDeps, nodeId: string, log: Logger): Promise<void> {
  const view = deps.registry.view(nodeId);
  if (view === undefined) return;
  try {
    const fresh = await deps.connections.getCapacity(nodeId);
    deps.registry.updateCapacity(nodeId, { ...view.capacity, ...fresh });
  } catch (err) {
    log.debug('capacity refresh failed; the next renewal will bring it', { node: nodeId, error: errorMessage(err) });
  }
}
