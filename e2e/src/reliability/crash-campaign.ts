// R1 crash campaign (issue 14): volume life cycles (create, stage, publish, unpublish, unstage,
// delete) through the local stack on emulated PMEM, every third of them a Kata Containers volume
// (kataContainers: "true", issue 26: an image file inside the volume, published through its own
// loop device), with the controller or a node driver killed
// (SIGKILL) at random points — before an operation, or a few milliseconds into it — and started
// again. Every operation is retried while it fails with a code a CSI caller retries (the process
// it talks to is gone or settling); any other failure is a finding. After every crash the
// controller must list exactly the volumes the campaign holds (0 lost, 0 extra), and after every
// retried operation the mounts must be what one success leaves (idempotency). The leak check at the
// end counts volumes, loop devices, image files, mounts and capacity against the start.
import { mkdir, readFile, readdir, readlink, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { DEFAULT_DRIVER_NAME, topologyKey } from '@pmem-csi/api';
import { NodeCsi, mountCapability, type ControllerCsi, type LocalStack } from '@pmem-csi/driver';
import { listLoopDevices } from '@pmem-csi/node';
import { HostRunner, isServiceError } from '@pmem-csi/runtime';
import { MiB } from '@pmem-csi/csi';

const KEY = topologyKey(DEFAULT_DRIVER_NAME);
const HOST = new HostRunner();

/** Codes a CSI caller (external-provisioner, kubelet) retries: the peer is gone, busy or settling. */
const RETRIED: ReadonlySet<number> = new Set([
  grpc.status.UNAVAILABLE,
  grpc.status.ABORTED,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.CANCELLED,
]);

export const STEPS = ['create', 'stage', 'publish', 'unpublish', 'unstage', 'delete'] as const;
export type Step = (typeof STEPS)[number];

export interface CampaignOptions {
  readonly cycles: number;
  /** Cycles run side by side (each lane one cycle at a time); crashes hit every lane's calls in flight. */
  readonly lanes: number;
  /** One cycle in `crashEvery` (on average) gets a crash. */
  readonly crashEvery: number;
  readonly seed: number;
  /** Where staging and target paths are made. */
  readonly mountDir: string;
  /** Give up on one operation after this long (its retries included). */
  readonly opTimeoutMs: number;
  readonly log: (line: string) => void;
  /** Stop starting new cycles after this long (the soak test); `cycles` stays the upper bound. */
  readonly durationMs?: number;
  /** false: no crashes at all, only the life cycles and their checks (the soak test). Default true. */
  readonly crashes?: boolean;
}

export interface Crash {
  readonly cycle: number;
  readonly victim: string;
  readonly step: Step;
  readonly delayMs: number;
}

export interface CampaignResult {
  readonly cycles: number;
  readonly crashes: readonly Crash[];
  /** Operations retried after a retriable failure (each counted once). */
  readonly retriedOps: number;
  readonly retriesByCode: Readonly<Record<string, number>>;
  /** Everything that broke a promise: wrong answers, lost or extra volumes, wrong mounts. */
  readonly findings: readonly string[];
  readonly durationMs: number;
  /** Wall time from each crash until the stack was ready again, summed. */
  readonly recoveryMs: number;
  /** DeleteVolume answers "in use" that went away when retried. */
  readonly busyRetries: number;
}

/** A small seeded generator (mulberry32): the same seed gives the same campaign. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const unescape = (s: string): string =>
  s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/** Mount points below `dir` (from /proc/self/mountinfo, octal escapes decoded). */
export async function mountsBelow(dir: string): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  return text
    .split('\n')
    .map((line) => unescape(line.split(' ')[4] ?? ''))
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
}

/** The source (device) of the top mount at `path` (/proc/self/mountinfo); undefined when nothing is mounted there. */
export async function mountSourceAt(path: string): Promise<string | undefined> {
  let source: string | undefined;
  for (const line of (await readFile('/proc/self/mountinfo', 'utf8')).split('\n')) {
    const fields = line.split(' ');
    if (unescape(fields[4] ?? '') !== path) continue;
    const sep = fields.indexOf('-');
    if (sep > 0) source = unescape(fields[sep + 2] ?? '');
  }
  return source;
}

/** Every KATA_EVERY-th cycle's volume is a Kata Containers volume (by cycle number: the seed's crash plan stays the same). */
export const KATA_EVERY = 3;
export const isKataCycle = (cycle: number): boolean => cycle % KATA_EVERY === KATA_EVERY - 1;

/** Loop devices whose backing file is (or was) below `dir`. */
export async function loopDevicesBelow(dir: string): Promise<string[]> {
  return (await listLoopDevices(HOST))
    .filter((l) => l.backFile.startsWith(`${dir}/`))
    .map((l) => `${l.name} -> ${l.backFile}${l.deleted ? ' (deleted)' : ''}`);
}

/** Regular files below `dir` whose name ends in ".img" (emulated volumes' backing files). */
export async function imageFilesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile() && e.name.endsWith('.img')).map((e) => join(e.parentPath, e.name));
}

/** What the leak check compares: taken at the start and at the end of the campaign. */
export interface Inventory {
  readonly volumes: readonly string[];
  readonly loopDevices: readonly string[];
  readonly imageFiles: readonly string[];
  readonly mounts: readonly string[];
  readonly capacity: Readonly<Record<string, string>>;
}

export async function inventory(stack: LocalStack, ctl: ControllerCsi, mountDir: string): Promise<Inventory> {
  const capacity: Record<string, string> = {};
  for (const node of stack.nodes) {
    const c = await ctl.getCapacity({ accessible_topology: { segments: { [KEY]: node.id } } });
    capacity[node.id] = c.available_capacity;
  }
  return {
    volumes: (await ctl.listVolumes()).entries.map((e) => e.volume?.volume_id ?? '').sort(),
    // Emulated volumes' devices (files below the stack), and Kata image files' (inside volumes mounted below mountDir).
    loopDevices: [...(await loopDevicesBelow(stack.dir)), ...(await loopDevicesBelow(mountDir))],
    imageFiles: await imageFilesBelow(stack.dir),
    mounts: [...(await mountsBelow(stack.dir)), ...(await mountsBelow(mountDir))],
    capacity,
  };
}

interface Volume {
  readonly name: string;
  /** A Kata Containers volume (kataContainers: "true"): every KATA_EVERY-th cycle. */
  readonly kata: boolean;
  /** CreateVolume's volume_context, passed to stage and publish as the kubelet does. */
  context?: Readonly<Record<string, string>>;
  /** The crash planned for this volume's cycle, if any (for findings). */
  readonly crash: Crash | undefined;
  id?: string;
  node?: string;
  readonly staging: string;
  readonly target: string;
}

const isPid = (name: string): boolean => /^\d+$/.test(name);

/** Processes that hold `device` open, with their command lines. */
async function openersOf(device: string): Promise<string[]> {
  const holders: string[] = [];
  for (const pid of (await readdir('/proc').catch(() => [])).filter(isPid)) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
    const targets = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
    if (!targets.includes(device)) continue;
    const cmd = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ').trim();
    holders.push(`pid ${pid} (${cmd.slice(0, 100)})`);
  }
  return holders;
}

/**
 * Other mount namespaces in which the device with `majMin` is mounted: a copy of a mount (a
 * container started while the volume was mounted, on a host whose mounts do not propagate) keeps
 * the device busy and is invisible in our own namespace.
 */
async function namespacesMounting(majMin: string): Promise<string[]> {
  const own = await readlink('/proc/self/ns/mnt').catch(() => '');
  const seen = new Set<string>([own]);
  const found: string[] = [];
  for (const pid of (await readdir('/proc').catch(() => [])).filter(isPid)) {
    const ns = await readlink(`/proc/${pid}/ns/mnt`).catch(() => own);
    if (seen.has(ns)) continue;
    seen.add(ns);
    const info = await readFile(`/proc/${pid}/mountinfo`, 'utf8').catch(() => '');
    if (info.split('\n').some((l) => l.split(' ')[2] === majMin)) found.push(`${ns} (pid ${pid})`);
  }
  return found;
}

/**
 * For a finding that names a device in use: who holds it open, and where it is mounted. For an
 * unmount refused as busy: the same for each loop device whose backing file is below that path (a
 * Kata image's device keeps the staged filesystem busy until it is really detached).
 */
async function holdersOf(finding: string): Promise<string> {
  const busy = /umount (\S+): .*target is busy/.exec(finding)?.[1];
  if (busy !== undefined) {
    const below = (await listLoopDevices(HOST)).filter((l) => l.backFile.startsWith(`${busy}/`));
    const each = await Promise.all(
      below.map((l) => holdersOfDevice(l.name.startsWith('/dev/') ? l.name : `/dev/${l.name}`)),
    );
    return below.length === 0 ? ` — no loop device has its backing file below ${busy}` : each.join('');
  }
  const device = /(\/dev\/loop\d+)/.exec(finding)?.[1];
  return device === undefined ? '' : holdersOfDevice(device);
}

async function holdersOfDevice(device: string): Promise<string> {
  const holders = await openersOf(device);
  const mounts = (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .filter((l) => l.includes(` ${device} `))
    .map((l) => l.split(' ')[4] ?? '');
  const majMin = (await readFile(`/sys/block/${device.slice('/dev/'.length)}/dev`, 'utf8').catch(() => '')).trim();
  const elsewhere = majMin === '' ? [] : await namespacesMounting(majMin);
  const other = elsewhere.length === 0 ? '' : `; mounted in other mount namespaces: ${elsewhere.join(', ')}`;
  return ` — ${device} held open by ${holders.length === 0 ? 'no process' : holders.join(', ')}; mounted at ${mounts.length === 0 ? 'nothing' : mounts.join(', ')}${other}`;
}

/** A DeleteVolume answer "device in use" (retried for a while, as external-provisioner does). */
const inUse = (e: unknown): boolean =>
  isServiceError(e) && e.code === grpc.status.FAILED_PRECONDITION && / is in use /.test(e.details);

const codeName = (code: number): string => grpc.status[code] ?? String(code);

export class CrashCampaign {
  readonly #stack: LocalStack;
  readonly #ctl: ControllerCsi;
  readonly #o: CampaignOptions;
  readonly #rand: () => number;
  readonly #nodes = new Map<string, NodeCsi>();
  readonly #findings: string[] = [];
  readonly #crashes: Crash[] = [];
  readonly #retriesByCode: Record<string, number> = {};
  #retriedOps = 0;
  #busyRetries = 0;
  #recoveryMs = 0;
  /** Volumes created and not yet deleted, by name. */
  readonly #held = new Map<string, Volume>();
  /** Names whose CreateVolume is in flight, ids whose DeleteVolume is in flight (other lanes). */
  readonly #creating = new Set<string>();
  readonly #deleting = new Set<string>();
  /** One crash at a time: a crash planned while another is being recovered from is skipped. */
  #crashing = false;

  constructor(stack: LocalStack, ctl: ControllerCsi, options: CampaignOptions) {
    this.#stack = stack;
    this.#ctl = ctl;
    this.#o = options;
    this.#rand = random(options.seed);
    for (const n of stack.nodes) this.#nodes.set(n.id, new NodeCsi(n.socket));
  }

  close(): void {
    for (const c of this.#nodes.values()) c.close();
  }

  async run(): Promise<CampaignResult> {
    const started = Date.now();
    let next = 0;
    let done = 0;
    const until = this.#o.durationMs === undefined ? Number.POSITIVE_INFINITY : started + this.#o.durationMs;
    const lane = async (): Promise<void> => {
      while (next < this.#o.cycles && Date.now() < until) {
        const cycle = next++;
        const crash =
          this.#o.crashes !== false && this.#rand() * this.#o.crashEvery < 1 ? this.#planCrash(cycle) : undefined;
        await this.#cycle(cycle, crash);
        if (++done % 25 === 0)
          this.#o.log(
            `  ${done}${this.#o.durationMs === undefined ? `/${this.#o.cycles}` : ''} cycles, ${this.#crashes.length} crashes, ${this.#retriedOps} retried operations, ${this.#findings.length} findings`,
          );
      }
    };
    await Promise.all(Array.from({ length: this.#o.lanes }, lane));
    return {
      cycles: done,
      crashes: this.#crashes,
      retriedOps: this.#retriedOps,
      retriesByCode: this.#retriesByCode,
      findings: this.#findings,
      durationMs: Date.now() - started,
      recoveryMs: this.#recoveryMs,
      busyRetries: this.#busyRetries,
    };
  }

  #planCrash(cycle: number): Crash {
    // The controller one time in four: each of its restarts costs a settle period (every node must
    // have registered again before it may answer for absent volumes), a node's only its start.
    const nodes = this.#stack.nodes.map((n) => n.id);
    const victim =
      this.#rand() < 0.25 ? 'controller' : (nodes[Math.floor(this.#rand() * nodes.length)] ?? 'controller');
    const step = STEPS[Math.floor(this.#rand() * STEPS.length)] ?? 'create';
    // 0: before the call is sent; otherwise a few milliseconds into it.
    const delayMs = this.#rand() < 0.25 ? 0 : Math.floor(this.#rand() * 40);
    return { cycle, victim, step, delayMs };
  }

  async #cycle(cycle: number, crash: Crash | undefined): Promise<void> {
    const name = `crash-${this.#o.seed}-${cycle}`;
    const base = join(this.#o.mountDir, String(cycle));
    const v: Volume = {
      name,
      crash,
      kata: isKataCycle(cycle),
      staging: join(base, 'staging'),
      target: join(base, 'target'),
    };
    await mkdir(base, { recursive: true });
    for (const step of STEPS) {
      const kill = crash?.step === step ? crash : undefined;
      const ok = await this.#step(step, v, kill);
      if (!ok) return; // a finding was recorded; the leak check shows what it left
    }
    await rm(base, { recursive: true, force: true });
  }

  async #step(step: Step, v: Volume, planned: Crash | undefined): Promise<boolean> {
    const op = (): Promise<unknown> => this.#call(step, v);
    const crash = planned !== undefined && !this.#crashing ? this.#withVictim(planned) : undefined;
    let killed: Promise<void> | undefined;
    const crashedAt = Date.now();
    if (crash !== undefined) {
      this.#crashing = true;
      this.#crashes.push(crash);
      if (crash.delayMs === 0) await this.#kill(crash.victim);
      else
        killed = new Promise<void>((resolve) => setTimeout(resolve, crash.delayMs)).then(() =>
          this.#kill(crash.victim),
        );
    }
    // In flight from the first attempt to the last retry: between two attempts the operation may
    // already have happened on the node (its answer lost in a crash).
    const inFlight = this.#inFlight(step, v);
    inFlight?.set.add(inFlight.key);
    try {
      const outcome = await this.#retried(`${step} ${v.name}`, op);
      await killed;
      if (outcome !== undefined) {
        const crashed =
          v.crash === undefined ? 'no crash in this cycle' : `this cycle's crash: ${JSON.stringify(v.crash)}`;
        this.#findings.push(`${outcome} [${crashed}]${await holdersOf(outcome)}`);
        return false;
      }
      if (crash !== undefined) await this.#afterCrash(crash);
    } finally {
      inFlight?.set.delete(inFlight.key);
      if (crash !== undefined) {
        this.#recoveryMs += Date.now() - crashedAt;
        this.#crashing = false;
      }
    }
    return this.#checkStep(step, v);
  }

  /** Where a create (by name) or delete (by id) is marked as in flight; nothing for node steps. */
  #inFlight(step: Step, v: Volume): { set: Set<string>; key: string } | undefined {
    if (step === 'create') return { set: this.#creating, key: v.name };
    if (step === 'delete') return { set: this.#deleting, key: v.id ?? '' };
    return undefined;
  }

  /** The first crashes take every process once (controller first), whatever was drawn. */
  #withVictim(planned: Crash): Crash {
    const crashed = new Set(this.#crashes.map((c) => c.victim));
    const first = ['controller', ...this.#stack.nodes.map((n) => n.id)].find((victim) => !crashed.has(victim));
    return first === undefined ? planned : { ...planned, victim: first };
  }

  async #kill(victim: string): Promise<void> {
    await this.#stack.restart(victim, 'crash');
  }

  /**
   * Run `op` until it succeeds; a non-retriable failure or the timeout is returned as a finding.
   * FAILED_PRECONDITION "in use" of a DeleteVolume is retried for a while too, as external-provisioner
   * does (a device can be busy for a moment after its unmount); it is a finding when it persists.
   */
  async #retried(what: string, op: () => Promise<unknown>): Promise<string | undefined> {
    const deadline = Date.now() + this.#o.opTimeoutMs;
    const busyUntil = Date.now() + 30_000;
    let retried = false;
    for (;;) {
      try {
        await op();
        return undefined;
      } catch (e) {
        if (inUse(e) && Date.now() < busyUntil) {
          this.#busyRetries++;
          await new Promise((resolve) => setTimeout(resolve, 500));
          continue;
        }
        if (!isServiceError(e) || !RETRIED.has(e.code))
          return `${what}: ${isServiceError(e) ? `${codeName(e.code)} ${e.details}` : String(e)}`;
        this.#retriesByCode[codeName(e.code)] = (this.#retriesByCode[codeName(e.code)] ?? 0) + 1;
        if (!retried) this.#retriedOps++;
        retried = true;
        if (Date.now() > deadline)
          return `${what}: still ${codeName(e.code)} after ${this.#o.opTimeoutMs / 1000} s (${e.details})`;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  #node(v: Volume): NodeCsi {
    const client = v.node === undefined ? undefined : this.#nodes.get(v.node);
    if (client === undefined) throw new Error(`volume ${v.name} has no node (create did not succeed?)`);
    return client;
  }

  async #call(step: Step, v: Volume): Promise<unknown> {
    const cap = mountCapability('ext4');
    const id = v.id ?? '';
    const calls: Record<Step, () => Promise<unknown>> = {
      create: () => this.#create(v),
      stage: () =>
        this.#node(v).stage({
          volume_id: id,
          staging_target_path: v.staging,
          volume_capability: cap,
          publish_context: {},
          volume_context: v.context ?? {},
        }),
      publish: () =>
        this.#node(v).publish({
          volume_id: id,
          staging_target_path: v.staging,
          target_path: v.target,
          volume_capability: cap,
          readonly: false,
          volume_context: v.context ?? {},
        }),
      unpublish: () => this.#node(v).unpublish(id, v.target),
      unstage: () => this.#node(v).unstage(id, v.staging),
      delete: () => this.#delete(v),
    };
    return calls[step]();
  }

  async #create(v: Volume): Promise<unknown> {
    const r = await this.#ctl.createVolume({
      name: v.name,
      capacity_range: { required_bytes: String(16 * MiB) },
      volume_capabilities: [mountCapability('ext4')],
      parameters: v.kata ? { eraseafter: 'false', kataContainers: 'true' } : { eraseafter: 'false' },
    });
    const id = r.volume?.volume_id;
    v.context = r.volume?.volume_context ?? {};
    if (v.kata && v.context['kataContainers'] !== 'true')
      this.#findings.push(
        `create ${v.name}: a Kata volume's volume_context lacks kataContainers "true": ${JSON.stringify(v.context)}`,
      );
    if (v.id !== undefined && v.id !== id)
      this.#findings.push(`create ${v.name}: a retry answered volume ${id ?? '(none)'}, an earlier answer was ${v.id}`);
    v.id = id;
    v.node = r.volume?.accessible_topology[0]?.segments[KEY];
    this.#held.set(v.name, v);
    return r;
  }

  async #delete(v: Volume): Promise<unknown> {
    const r = await this.#ctl.deleteVolume(v.id ?? '');
    this.#held.delete(v.name);
    return r;
  }

  /** What one successful operation leaves, whatever number of attempts it took. */
  async #checkStep(step: Step, v: Volume): Promise<boolean> {
    const count = async (path: string): Promise<number> => (await mountsBelow(path)).filter((p) => p === path).length;
    const expected: Partial<Record<Step, { staging: number; target: number }>> = {
      stage: { staging: 1, target: 0 },
      publish: { staging: 1, target: 1 },
      unpublish: { staging: 1, target: 0 },
      unstage: { staging: 0, target: 0 },
    };
    const want = expected[step];
    if (want === undefined) return true;
    const got = { staging: await count(v.staging), target: await count(v.target) };
    if (got.staging !== want.staging || got.target !== want.target) {
      this.#findings.push(
        `${step} ${v.name}: mounts staging ${got.staging} target ${got.target}, one success leaves staging ${want.staging} target ${want.target}`,
      );
      return false;
    }
    return step === 'publish' ? this.#checkPublishedFrom(v) : true;
  }

  /** A Kata volume's target is mounted from a loop device of its image file (inside the staged volume); any other's is not. */
  async #checkPublishedFrom(v: Volume): Promise<boolean> {
    const source = await mountSourceAt(v.target);
    const base = (d: string | undefined): string => (d ?? '').replace(/^\/dev\//, '');
    const loop = (await listLoopDevices(HOST)).find((l) => base(l.name) === base(source));
    const throughImage = loop !== undefined && loop.backFile.startsWith(`${v.staging}/`);
    if (throughImage === v.kata) return true;
    this.#findings.push(
      `publish ${v.name}: target mounted from ${source ?? 'nothing'} (${loop === undefined ? 'not a loop device' : `loop device of ${loop.backFile}`}); ${v.kata ? "a Kata volume is published through its image file's loop device" : 'a volume without kataContainers is published from its own device'}`,
    );
    return false;
  }

  /** After a restart: the controller, once settled, lists exactly the volumes the campaign holds. */
  async #afterCrash(crash: Crash): Promise<void> {
    await this.#stack
      .ready(this.#o.opTimeoutMs)
      .catch((e: unknown) =>
        this.#findings.push(`after crash ${JSON.stringify(crash)}: stack not ready: ${String(e)}`),
      );
    const listed = await this.#retried('ListVolumes', async () => this.#ctl.listVolumes());
    if (listed !== undefined) {
      this.#findings.push(listed);
      return;
    }
    // Other lanes' creates and deletes may be in flight. A volume held before the listing must be
    // listed unless a delete of it was in flight; as many unknown volumes as creates in flight may
    // be listed. The final leak check is exact.
    const heldBefore = [...this.#held.values()].map((v) => v.id ?? '');
    const deleting = new Set(this.#deleting);
    const creating = this.#creating.size;
    const ids = new Set((await this.#ctl.listVolumes()).entries.map((e) => e.volume?.volume_id ?? ''));
    const heldAfter = new Set([...this.#held.values()].map((v) => v.id ?? ''));
    const lost = heldBefore.filter(
      (id) => !ids.has(id) && !deleting.has(id) && !this.#deleting.has(id) && heldAfter.has(id),
    );
    const extra = [...ids].filter((id) => !heldAfter.has(id));
    if (lost.length > 0 || extra.length > Math.max(creating, this.#creating.size)) {
      this.#findings.push(
        `after crash ${JSON.stringify(crash)}: lost ${JSON.stringify(lost)}, extra ${JSON.stringify(extra)} (${creating} creates in flight)`,
      );
    }
  }
}
