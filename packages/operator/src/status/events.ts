// core/v1 Events about a PmemCSIDeployment (what `kubectl describe pcd` shows). Recording is best
// effort: a failed event write is logged and never fails a reconcile.
import type { CoreV1Event } from '@kubernetes/client-node';
import { API_GROUP_VERSION, KIND } from '@pmem-csi/api';
import type { Logger } from '@pmem-csi/runtime';
import type { Clock } from '../clock.js';
import type { KubeApi } from '../kube/kube-port.js';
import { CLUSTER_EVENT_NAMESPACE, EVENT_SOURCE_COMPONENT } from '@pmem-csi/api';
import type { OwnerDeployment } from '../objects/context.js';
import type { StatusEvent } from './deployment-status.js';

export interface EventRecorder {
  record(cr: OwnerDeployment, event: StatusEvent): Promise<void>;
}

/** The Event object for `event` about `cr` (name unique per CR and time, as client-go makes them). */
export function eventObject(
  cr: OwnerDeployment,
  event: StatusEvent,
  context: { now: Date; instance: string },
): CoreV1Event {
  const time = context.now;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: `${cr.metadata.name}.${(time.getTime() * 1000 + Math.floor(Math.random() * 1000)).toString(16)}`,
      namespace: CLUSTER_EVENT_NAMESPACE,
    },
    involvedObject: {
      apiVersion: API_GROUP_VERSION,
      kind: KIND,
      name: cr.metadata.name,
      uid: cr.metadata.uid,
      ...(cr.metadata.resourceVersion === undefined ? {} : { resourceVersion: cr.metadata.resourceVersion }),
    },
    type: event.type,
    reason: event.reason,
    message: event.message,
    source: { component: EVENT_SOURCE_COMPONENT },
    reportingComponent: EVENT_SOURCE_COMPONENT,
    reportingInstance: context.instance,
    firstTimestamp: time,
    lastTimestamp: time,
    count: 1,
  };
}

export function kubeEventRecorder(
  kube: KubeApi,
  options: { clock: Clock; log: Logger; instance: string },
): EventRecorder {
  return {
    async record(cr, event) {
      try {
        await kube.createEvent(
          eventObject(cr, event, { now: new Date(options.clock.now()), instance: options.instance }),
        );
      } catch (e) {
        options.log.warn('recording event failed', { deployment: cr.metadata.name, reason: event.reason, error: e });
      }
    },
  };
}
