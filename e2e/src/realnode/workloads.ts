// What the real-node scenarios run and read: test pods that report through their termination message (the kubelet posts /dev/termination-log into the
// pod status, so no exec or log streaming is needed to read a result), and waits on pods.
import type { Kube, KubeObject, Ref } from '../cluster/kube.js';
import { waitFor, WaitAborted } from '../cluster/wait.js';

export interface PodStatus {
  phase?: string;
  podIP?: string;
  conditions?: Array<{ type: string; status: string }>;
  containerStatuses?: Array<{
    name: string;
    ready: boolean;
    restartCount: number;
    /** The image the container runtime runs (normalised name) and its ID. */
    image?: string;
    imageID?: string;
    state?: {
      running?: object;
      waiting?: { reason?: string; message?: string };
      terminated?: { exitCode: number; reason?: string; message?: string };
    };
  }>;
}
export interface Pod extends KubeObject {
  spec: { nodeName?: string; containers: Array<{ name: string; image: string }> };
  status?: PodStatus;
}

export const podRef = (name: string, namespace: string): Ref => ({ apiVersion: 'v1', kind: 'Pod', name, namespace });

/** A ReadWriteOnce claim of `size` (a quantity, e.g. 32Mi) in `namespace`. */
export function claimObject(o: {
  name: string;
  namespace: string;
  storageClassName: string;
  size: string;
}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: o.name, namespace: o.namespace },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: o.storageClassName,
      resources: { requests: { storage: o.size } },
    },
  };
}

/** The label of every script pod: its name (select one with `${POD_LABEL}=<name>`). */
export const POD_LABEL = 'e2e.pmem-csi.intel.com/pod';

/** A short-lived pod on the real node that runs `script` with /bin/sh and reports through its termination message. */
export function scriptPod(o: {
  name: string;
  namespace: string;
  image: string;
  script: string;
  volumes?: unknown[];
  volumeMounts?: unknown[];
  volumeDevices?: unknown[];
  readyWhenFile?: string;
}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name, namespace: o.namespace, labels: { [POD_LABEL]: o.name } },
    spec: {
      restartPolicy: 'Never',
      nodeSelector: { storage: 'pmem' },
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: o.image,
          imagePullPolicy: 'Never',
          command: ['/bin/sh', '-c', `set -e; ${o.script}`],
          terminationMessagePolicy: 'File',
          ...(o.volumeMounts === undefined ? {} : { volumeMounts: o.volumeMounts }),
          ...(o.volumeDevices === undefined ? {} : { volumeDevices: o.volumeDevices }),
          // For a pod that keeps running: ready once the script has written this file.
          ...(o.readyWhenFile === undefined
            ? {}
            : { readinessProbe: { exec: { command: ['test', '-f', o.readyWhenFile] }, periodSeconds: 1 } }),
        },
      ],
      ...(o.volumes === undefined ? {} : { volumes: o.volumes }),
    },
  };
}

type ContainerState = NonNullable<NonNullable<PodStatus['containerStatuses']>[number]['state']>;

function describeState(state: ContainerState | undefined): string {
  if (state?.waiting !== undefined) return `waiting ${state.waiting.reason ?? ''} ${state.waiting.message ?? ''}`;
  if (state?.terminated !== undefined)
    return `terminated ${state.terminated.exitCode} ${state.terminated.message ?? ''}`;
  return state?.running !== undefined ? 'running' : '-';
}

const describePod = (p: Pod | undefined): string =>
  p === undefined
    ? 'pod absent'
    : `phase ${p.status?.phase ?? '-'}, node ${p.spec.nodeName ?? '-'}, container ${describeState(p.status?.containerStatuses?.[0]?.state)}`;

const terminationMessage = (p: Pod | undefined): string =>
  (p?.status?.containerStatuses?.[0]?.state?.terminated?.message ?? '').trim();

/** Wait until the pod Succeeded; returns its termination message. Fails at once if it Failed. */
export async function podResult(
  kube: Kube,
  ref: Ref,
  timeoutMs: number,
  why: () => Promise<string> | string = () => '',
): Promise<string> {
  let last: Pod | undefined;
  return waitFor(
    `pod ${ref.namespace}/${ref.name} to succeed`,
    async () => {
      last = await kube.get<Pod>(ref);
      const phase = last?.status?.phase;
      if (phase === 'Failed') throw new WaitAborted(`pod ${ref.namespace}/${ref.name} failed: ${describePod(last)}`);
      return phase === 'Succeeded' ? terminationMessage(last) : undefined;
    },
    { timeoutMs, intervalMs: 500, describe: async () => `${describePod(last)}; ${await why()}` },
  );
}

/** Wait until every container of the pods matching `selector` is ready; returns them. */
export async function podsReady(
  kube: Kube,
  { namespace, selector, count, timeoutMs }: { namespace: string; selector: string; count: number; timeoutMs: number },
): Promise<Pod[]> {
  let last: Pod[] = [];
  return waitFor(
    `${count} pod(s) ${selector} in ${namespace} to be Running and ready`,
    async () => {
      last = await kube.list<Pod>('v1', 'Pod', { namespace, labelSelector: selector });
      const ready = last.filter(
        (p) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.ready),
      );
      return ready.length === count && last.length === count ? ready : undefined;
    },
    {
      timeoutMs,
      intervalMs: 500,
      describe: () => last.map((p) => `${p.metadata.name}: ${describePod(p)}`).join('; ') || 'no pods',
    },
  );
}

/** What volumeUserScript creates once it has written the volume (its pod's readiness file). */
export const VOLUME_USER_READY_FILE = '/tmp/written';

/**
 * The script of a pod that keeps a volume in use at /data across a rollout: it writes `token` to
 * /data/f, then every 0.2 s checks its mount (the /proc/mounts line of /data) and the file's
 * content, and writes and fsyncs a heartbeat file /data/beat (reads could come from the page cache;
 * a write through to a lost device fails); it fails at once with the reason. It ends when a later
 * pod has read the volume and left /data/done, reporting "<token> <content of done> checks=<n>".
 * Ready (readyWhenFile) once VOLUME_USER_READY_FILE exists.
 */
export function volumeUserScript(token: string): string {
  return [
    `echo ${token} > /data/f; sync; m0="$(grep ' /data ' /proc/mounts)"; touch ${VOLUME_USER_READY_FILE}; n=0`,
    'while :; do',
    '  m="$(grep \' /data \' /proc/mounts || true)"',
    '  if [ "$m" != "$m0" ]; then echo "mount of /data changed after $n checks: [$m0] -> [$m]" > /dev/termination-log; exit 1; fi',
    '  d="$(cat /data/f 2>&1 || true)"',
    `  if [ "$d" != "${token}" ]; then echo "/data/f changed after $n checks: $d" > /dev/termination-log; exit 1; fi`,
    '  if ! { echo "$n" > /data/beat && sync /data/beat; }; then echo "writing /data/beat failed after $n checks" > /dev/termination-log; exit 1; fi',
    '  if [ -f /data/done ]; then echo "$d $(cat /data/done) checks=$n" > /dev/termination-log; exit 0; fi',
    '  n=$((n+1)); sleep 0.2',
    'done',
  ].join('\n');
}
