// What the real-node scenarios run and read: the images built by e2e/tools/images.sh, test pods
// that report through their termination message (the kubelet posts /dev/termination-log into the
// pod status, so no exec or log streaming is needed to read a result), and waits on pods.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../cluster/components.js';
import type { Kube, KubeObject, Ref } from '../cluster/kube.js';
import { waitFor, WaitAborted } from '../cluster/wait.js';

export const IMAGES_COMMAND = 'bash e2e/tools/images.sh';

export interface BuiltImage {
  readonly ref: string;
  readonly archive: string;
  readonly size: string;
}

/** The images this tier needs, from `images.sh --print-env`; fails naming the command that builds them. */
export function builtImages(names: readonly string[], version?: string): Record<string, BuiltImage> {
  const args = [join(REPO_ROOT, 'e2e/tools/images.sh'), '--print-env', ...(version === undefined ? [] : ['--version', version]), ...names];
  const res = spawnSync('bash', args, { encoding: 'utf8', timeout: 60_000 });
  if (res.status !== 0) {
    throw new Error(`the real-node images are not built (${(res.stderr || res.error?.message || '').trim().split('\n').slice(-3).join('; ')}): run ${IMAGES_COMMAND}${version === undefined ? '' : ` --version ${version}`}`);
  }
  const env = new Map<string, string>();
  for (const line of res.stdout.split('\n')) {
    const m = /^export (PMEM_CSI_IMAGE_[A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m?.[1] !== undefined && m[2] !== undefined) env.set(m[1], m[2].replace(/^'(.*)'$/, '$1'));
  }
  const out: Record<string, BuiltImage> = {};
  for (const name of names) {
    const key = `PMEM_CSI_IMAGE_${name.toUpperCase().replaceAll('-', '_')}`;
    const ref = env.get(key);
    const archive = env.get(`${key}_ARCHIVE`);
    if (ref === undefined || archive === undefined) throw new Error(`${IMAGES_COMMAND} --print-env printed no ${key} / ${key}_ARCHIVE: run ${IMAGES_COMMAND} ${name}`);
    out[name] = { ref, archive, size: env.get(`${key}_SIZE`) ?? '?' };
  }
  return out;
}

export interface PodStatus {
  phase?: string;
  podIP?: string;
  conditions?: Array<{ type: string; status: string }>;
  containerStatuses?: Array<{
    name: string;
    ready: boolean;
    restartCount: number;
    state?: { running?: object; waiting?: { reason?: string; message?: string }; terminated?: { exitCode: number; reason?: string; message?: string } };
  }>;
}
export interface Pod extends KubeObject {
  spec: { nodeName?: string; containers: Array<{ name: string; image: string }> };
  status?: PodStatus;
}

export const podRef = (name: string, namespace: string): Ref => ({ apiVersion: 'v1', kind: 'Pod', name, namespace });

/** A short-lived pod on the real node that runs `script` with /bin/sh and reports through its termination message. */
export function scriptPod(o: { name: string; namespace: string; image: string; script: string; volumes?: unknown[]; volumeMounts?: unknown[]; volumeDevices?: unknown[] }): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name, namespace: o.namespace },
    spec: {
      restartPolicy: 'Never',
      nodeSelector: { storage: 'pmem' },
      terminationGracePeriodSeconds: 1,
      containers: [{
        name: 'main',
        image: o.image,
        imagePullPolicy: 'Never',
        command: ['/bin/sh', '-c', `set -e; ${o.script}`],
        terminationMessagePolicy: 'File',
        ...(o.volumeMounts === undefined ? {} : { volumeMounts: o.volumeMounts }),
        ...(o.volumeDevices === undefined ? {} : { volumeDevices: o.volumeDevices }),
      }],
      ...(o.volumes === undefined ? {} : { volumes: o.volumes }),
    },
  };
}

const describePod = (p: Pod | undefined): string => {
  if (p === undefined) return 'pod absent';
  const c = p.status?.containerStatuses?.[0];
  const state = c?.state?.waiting ? `waiting ${c.state.waiting.reason ?? ''} ${c.state.waiting.message ?? ''}` : c?.state?.terminated ? `terminated ${c.state.terminated.exitCode} ${c.state.terminated.message ?? ''}` : c?.state?.running ? 'running' : '-';
  return `phase ${p.status?.phase ?? '-'}, node ${p.spec.nodeName ?? '-'}, container ${state}`;
};

/** Wait until the pod Succeeded; returns its termination message. Fails at once if it Failed. */
export async function podResult(kube: Kube, ref: Ref, timeoutMs: number, why: () => Promise<string> | string = () => ''): Promise<string> {
  let last: Pod | undefined;
  return waitFor(`pod ${ref.namespace}/${ref.name} to succeed`, async () => {
    last = await kube.get<Pod>(ref);
    const terminated = last?.status?.containerStatuses?.[0]?.state?.terminated;
    if (last?.status?.phase === 'Failed') throw new WaitAborted(`pod ${ref.namespace}/${ref.name} failed: ${describePod(last)}`);
    return last?.status?.phase === 'Succeeded' ? (terminated?.message ?? '').trim() : undefined;
  }, { timeoutMs, intervalMs: 500, describe: async () => `${describePod(last)}; ${await why()}` });
}

/** Wait until every container of the pods matching `selector` is ready; returns them. */
export async function podsReady(kube: Kube, { namespace, selector, count, timeoutMs }: { namespace: string; selector: string; count: number; timeoutMs: number }): Promise<Pod[]> {
  let last: Pod[] = [];
  return waitFor(`${count} pod(s) ${selector} in ${namespace} to be Running and ready`, async () => {
    last = await kube.list<Pod>('v1', 'Pod', { namespace, labelSelector: selector });
    const ready = last.filter((p) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.ready));
    return ready.length === count && last.length === count ? ready : undefined;
  }, { timeoutMs, intervalMs: 500, describe: () => last.map((p) => `${p.metadata.name}: ${describePod(p)}`).join('; ') || 'no pods' });
}
