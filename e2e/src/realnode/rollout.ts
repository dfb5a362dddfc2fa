// Watching a driver rollout on the real node (the operator upgrade scenario): what the operator,
// controller and node pods, the controller Deployment, the node DaemonSet, the PmemCSIDeployment
// and a workload pod look like every few hundred milliseconds. The observer prints a timeline of
// every change, records when each milestone was first reached and every sample that broke an
// invariant (e.g. two controllers at once), so the assertions read what was seen, not a guess.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeObject } from '../cluster/kube.js';
import type { PmemDeployment } from '../cluster/pmem-deployment.js';
import type { Pod } from './workloads.js';

interface Container {
  name: string;
  image: string;
}

/** The fields of a Deployment or DaemonSet the rollout checks read. */
export interface Workload extends KubeObject {
  spec: {
    template: { spec: { containers: Container[] } };
    strategy?: { type?: string };
    updateStrategy?: { type?: string; rollingUpdate?: { maxUnavailable?: number | string } };
    replicas?: number;
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
    desiredNumberScheduled?: number;
    currentNumberScheduled?: number;
    updatedNumberScheduled?: number;
    numberReady?: number;
    numberAvailable?: number;
  };
}

/** One look at everything the rollout touches; `ms` since the upgrade started. */
export interface RolloutSnapshot {
  readonly ms: number;
  readonly operatorPods: readonly Pod[];
  readonly controllerPods: readonly Pod[];
  readonly nodePods: readonly Pod[];
  readonly deployment: Workload | undefined;
  readonly daemonSet: Workload | undefined;
  readonly cr: PmemDeployment | undefined;
  /** The pod that uses a volume throughout. */
  readonly workload: Pod | undefined;
}

/** The image of container `name` of a pod or a pod template; undefined when it has none of that name. */
export function imageOf(o: Pod | Workload, name: string): string | undefined {
  const containers = 'template' in o.spec ? o.spec.template.spec.containers : o.spec.containers;
  return containers.find((c) => c.name === name)?.image;
}

/** A pod that is or may still be running containers: not Succeeded or Failed (terminating pods count). */
export const isLive = (p: Pod): boolean => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';

/** Running, the Ready condition True and every container ready. */
export const isReady = (p: Pod): boolean =>
  p.status?.phase === 'Running' &&
  p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True' &&
  (p.status.containerStatuses ?? []).length > 0 &&
  (p.status.containerStatuses ?? []).every((c) => c.ready);

const observed = (w: Workload): boolean => (w.status?.observedGeneration ?? -1) >= (w.metadata.generation ?? 0);

/**
 * The DaemonSet has rolled to `image` (in `container`): its controller saw the new template, every
 * scheduled pod is updated, ready and available, and the pods that exist are exactly those: ready,
 * with that image, none terminating.
 */
export function daemonSetRolled(
  ds: Workload | undefined,
  pods: readonly Pod[],
  container: string,
  image: string,
): boolean {
  if (ds === undefined || imageOf(ds, container) !== image || !observed(ds)) return false;
  const s = ds.status ?? {};
  const desired = s.desiredNumberScheduled ?? -1;
  return (
    desired > 0 &&
    s.updatedNumberScheduled === desired &&
    s.numberReady === desired &&
    s.numberAvailable === desired &&
    pods.length === desired &&
    pods.every((p) => imageOf(p, container) === image && isReady(p) && p.metadata.deletionTimestamp === undefined)
  );
}

/** The Deployment has rolled to `image`: observed, all replicas updated, ready and available, its only pods are new and ready. */
export function deploymentRolled(
  d: Workload | undefined,
  pods: readonly Pod[],
  container: string,
  image: string,
): boolean {
  if (d === undefined || imageOf(d, container) !== image || !observed(d)) return false;
  const s = d.status ?? {};
  const want = d.spec.replicas ?? 1;
  return (
    s.updatedReplicas === want &&
    s.readyReplicas === want &&
    s.availableReplicas === want &&
    (s.replicas ?? 0) === want &&
    pods.length === want &&
    pods.every((p) => imageOf(p, container) === image && isReady(p) && p.metadata.deletionTimestamp === undefined)
  );
}

/** Phase Running with every driver component Ready. */
export const crRunning = (cr: PmemDeployment | undefined): boolean =>
  cr?.status?.phase === 'Running' &&
  (cr.status.driverComponents ?? []).length > 0 &&
  (cr.status.driverComponents ?? []).every((c) => c.status === 'Ready');

export interface Milestone {
  readonly name: string;
  /** Whether it holds in this snapshot; `reached` names the milestones reached so far (this sample's earlier ones included). */
  readonly holds: (s: RolloutSnapshot, reached: ReadonlySet<string>) => boolean;
}

export interface Invariant {
  readonly name: string;
  /** undefined when it holds; else what is wrong in this snapshot. */
  readonly broken: (s: RolloutSnapshot) => string | undefined;
}

/**
 * Samples `take()` every `intervalMs` until stop(): a timeline line whenever `describe` changes,
 * the first time each milestone held (once reached it stays reached), every broken invariant.
 * A failed sample is a timeline line too (and counted); sampling goes on.
 */
export class RolloutObserver {
  readonly lines: string[] = [];
  readonly reachedAt = new Map<string, number>();
  readonly violations: string[] = [];
  samples = 0;
  failedSamples = 0;
  #running = true;
  #loop: Promise<void> | undefined;
  #last: RolloutSnapshot | undefined;
  #lastLine = '';

  private readonly take: () => Promise<RolloutSnapshot>;
  private readonly describe: (s: RolloutSnapshot) => string;
  private readonly milestones: readonly Milestone[];
  private readonly invariants: readonly Invariant[];
  private readonly intervalMs: number;

  constructor(o: {
    take: () => Promise<RolloutSnapshot>;
    describe: (s: RolloutSnapshot) => string;
    milestones: readonly Milestone[];
    invariants: readonly Invariant[];
    intervalMs?: number;
  }) {
    this.take = o.take;
    this.describe = o.describe;
    this.milestones = o.milestones;
    this.invariants = o.invariants;
    this.intervalMs = o.intervalMs ?? 250;
  }

  start(): this {
    this.#loop = this.#run();
    return this;
  }

  /** The latest snapshot (undefined before the first). */
  get last(): RolloutSnapshot | undefined {
    return this.#last;
  }

  /** Seconds (one decimal) at which `name` was first reached, or undefined. */
  seconds(name: string): number | undefined {
    const ms = this.reachedAt.get(name);
    return ms === undefined ? undefined : Math.round(ms / 100) / 10;
  }

  /** The milestones by the time they were reached, then those not reached ("-"). */
  summary(): string {
    const at = (m: Milestone): number => this.reachedAt.get(m.name) ?? Number.POSITIVE_INFINITY;
    return [...this.milestones]
      .sort((x, y) => at(x) - at(y))
      .map((m) => `${m.name} ${this.seconds(m.name)?.toFixed(1) ?? '-'} s`)
      .join(', ');
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }

  /** Record one snapshot (the loop calls it; tests of the observer call it directly). */
  record(s: RolloutSnapshot): void {
    this.samples++;
    this.#last = s;
    const reached = new Set(this.reachedAt.keys());
    for (const m of this.milestones) {
      if (reached.has(m.name) || !m.holds(s, reached)) continue;
      this.reachedAt.set(m.name, s.ms);
      reached.add(m.name);
      this.lines.push(`${(s.ms / 1000).toFixed(1)} s: ** ${m.name}`);
    }
    for (const inv of this.invariants) {
      const why = inv.broken(s);
      if (why !== undefined) this.violations.push(`${(s.ms / 1000).toFixed(1)} s: ${inv.name}: ${why}`);
    }
    const now = this.describe(s);
    if (now !== this.#lastLine) this.lines.push(`${(s.ms / 1000).toFixed(1)} s: ${now}`);
    this.#lastLine = now;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      const started = Date.now();
      try {
        this.record(await this.take());
      } catch (e) {
        this.failedSamples++;
        const line = `sample failed: ${e instanceof Error ? e.message : String(e)}`;
        if (line !== this.#lastLine) this.lines.push(line);
        this.#lastLine = line;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, this.intervalMs - (Date.now() - started))));
    }
  }
}

/**
 * "image-label state" of a pod, e.g. "B ready", "A Running terminating", and the exit codes of
 * containers that ended, e.g. "A Failed terminating (exit pmem-driver 0, external-provisioner 2)".
 */
export function podState(p: Pod, container: string, label: (image: string | undefined) => string): string {
  const ready = isReady(p) ? 'ready' : (p.status?.phase ?? 'no phase');
  const exits = (p.status?.containerStatuses ?? []).flatMap((c) =>
    c.state?.terminated === undefined ? [] : [`${c.name} ${c.state.terminated.exitCode}`],
  );
  return `${label(imageOf(p, container))} ${ready}${p.metadata.deletionTimestamp === undefined ? '' : ' terminating'}${exits.length === 0 ? '' : ` (exit ${exits.join(', ')})`}`;
}

/** One line of a container log as the kubelet writes it ("<RFC 3339 time> <stream> <tag> <text>"). */
export interface LogLine {
  /** ms since the epoch (the kubelet's timestamp, to the millisecond). */
  readonly at: number;
  readonly text: string;
}

/** Parses the kubelet's CRI log format; lines that do not match it are skipped. */
export function parseCriLog(text: string): LogLine[] {
  const out: LogLine[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d) (?:stdout|stderr) [FP] (.*)$/.exec(line);
    if (m?.[1] === undefined || m[3] === undefined || m[4] === undefined) continue;
    out.push({ at: Date.parse(`${m[1]}${(m[2] ?? '.0').slice(0, 4)}${m[3]}`), text: m[4] });
  }
  return out;
}

/**
 * The log of one container of a pod from the kubelet's pod log directory
 * (<podLogsDir>/<namespace>_<pod>_<uid>/<container>/<restart>.log), every restart in order.
 * Throws naming the directory when the pod or container has none.
 */
export async function containerLog(
  podLogsDir: string,
  namespace: string,
  pod: string,
  container: string,
): Promise<LogLine[]> {
  const podDir = (await readdir(podLogsDir)).find((d) => d.startsWith(`${namespace}_${pod}_`));
  if (podDir === undefined) throw new Error(`no log directory of pod ${namespace}/${pod} in ${podLogsDir}`);
  const dir = join(podLogsDir, podDir, container);
  const files = (await readdir(dir))
    .filter((f) => /^\d+\.log$/.test(f))
    .sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
  if (files.length === 0) throw new Error(`no log file of container ${container} in ${dir}`);
  const lines: LogLine[] = [];
  for (const f of files) lines.push(...parseCriLog(await readFile(join(dir, f), 'utf8')));
  return lines;
}
