// The container images e2e/tools/images.sh builds, for the real-node tier: where they are
// (`images.sh --print-env`) and how to run one without a kubelet (buildah, chroot isolation,
// host network, rlimits within the host's hard limits), always under a timeout and always removed.
// Still child_process, not the e2e command runner (runTool, ../cluster/processes.ts): runTool is
// asynchronous, and builtImages, checkImport and Buildah's run/must are synchronous for their
// callers (about 25 call sites in images.e2e.test.ts and real-node.e2e.test.ts, e.g. inside
// withContainer callbacks); moving them means awaiting there too. Buildah.spawn stays as it is in
// any case: a container process that runs in the background in its own process group (stop()
// signals the group), which runTool (run to completion) is not for.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../cluster/components.js';

const IMAGES_SH = join(REPO_ROOT, 'e2e', 'tools', 'images.sh');
/** What builds them; failures name it. */
export const IMAGES_COMMAND = 'bash e2e/tools/images.sh';
/** Version B of the upgrade scenarios (X+1 of the registry install): driver and operator built with `images.sh --version` (tools/warm.sh, the CI's images phase). */
export const UPGRADE_VERSION = '0.1.1-e2e';

/** An image images.sh built: the reference manifests use, its ID, size and (for pods) archive. */
export interface BuiltImage {
  readonly name: string;
  readonly ref: string;
  readonly id: string;
  readonly sizeBytes: number;
  /** docker-archive for `ctr -n k8s.io images import`; bases have none. */
  readonly archive?: string;
  /** Built from other inputs than the checkout's now (edited since the build). */
  readonly stale: boolean;
}

export interface BuiltImages {
  /** buildah --root / --runroot of images.sh's private storage, and its registries.conf. */
  readonly storage: { readonly root: string; readonly runroot: string; readonly registriesConf: string };
  readonly images: ReadonlyMap<string, BuiltImage>;
  /** images.sh's warnings (stale images). */
  readonly warnings: readonly string[];
}

export class ImagesNotBuiltError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImagesNotBuiltError';
  }
}

/** `export NAME=value` lines (values as bash's printf %q writes them: backslash escapes). */
export function parseExports(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^export ([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m?.[1] === undefined || m[2] === undefined) continue;
    out.set(m[1], m[2].replace(/\\(.)/g, '$1'));
  }
  return out;
}

const envName = (image: string): string => `PMEM_CSI_IMAGE_${image.toUpperCase().replaceAll('-', '_')}`;

/**
 * The images images.sh built (--print-env). Throws ImagesNotBuiltError naming the command that
 * builds them when one is missing; one built from earlier inputs is returned with `stale` and a warning.
 */
export function builtImages(names: readonly string[], options: { version?: string } = {}): BuiltImages {
  const versionArgs = options.version === undefined ? [] : ['--version', options.version];
  const r = spawnSync('bash', [IMAGES_SH, '--print-env', ...versionArgs, ...names], {
    encoding: 'utf8',
    cwd: REPO_ROOT,
    timeout: 120_000,
  });
  if (r.error !== undefined)
    throw new ImagesNotBuiltError(`${IMAGES_COMMAND} --print-env did not finish: ${r.error.message}`);
  if (r.status !== 0) {
    throw new ImagesNotBuiltError(
      `images not built (exit ${r.status}); build them with \`${[IMAGES_COMMAND, ...versionArgs, ...names].join(' ')}\`:\n${r.stderr.trim()}`,
    );
  }
  const env = parseExports(r.stdout);
  const need = (key: string): string => {
    const v = env.get(key);
    if (v === undefined || v === '') throw new ImagesNotBuiltError(`${IMAGES_COMMAND} --print-env printed no ${key}`);
    return v;
  };
  const images = new Map<string, BuiltImage>();
  for (const name of names) {
    const key = envName(name);
    const archive = env.get(`${key}_ARCHIVE`);
    images.set(name, {
      name,
      ref: need(key),
      id: need(`${key}_ID`),
      sizeBytes: Number(need(`${key}_SIZE`)),
      stale: env.get(`${key}_STALE`) === '1',
      ...(archive === undefined ? {} : { archive }),
    });
  }
  return {
    storage: {
      root: need('PMEM_CSI_IMAGES_ROOT'),
      runroot: need('PMEM_CSI_IMAGES_RUNROOT'),
      registriesConf: need('PMEM_CSI_IMAGES_REGISTRIES_CONF'),
    },
    images,
    warnings: r.stderr.split('\n').filter((l) => l.includes('warning:')),
  };
}

export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The parts of an image's OCI configuration that say how it runs. */
export interface ImageConfig {
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  readonly user: string;
  readonly workingDir: string;
  readonly labels: Readonly<Record<string, string>>;
}

interface OciConfigJson {
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  User?: string;
  WorkingDir?: string;
  Labels?: Record<string, string> | null;
}

/** A working container of one image (buildah from); remove() it, also when a test fails. */
export class Container {
  #removed = false;

  private constructor(
    readonly buildah: Buildah,
    readonly name: string,
    readonly config: ImageConfig,
  ) {}

  static create(buildah: Buildah, ref: string): Container {
    const name = `pmem-csi-smoke-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    buildah.must(
      [
        'from',
        '--pull=never',
        '--quiet',
        '--name',
        name,
        '--ulimit',
        'nofile=1024:1024',
        '--ulimit',
        'nproc=4096:4096',
        ref,
      ],
      60_000,
    );
    try {
      const inspected = JSON.parse(buildah.must(['inspect', '--type', 'image', ref], 30_000)) as {
        OCIv1?: { config?: OciConfigJson };
      };
      const raw = inspected.OCIv1?.config ?? {};
      const config: ImageConfig = {
        entrypoint: raw.Entrypoint ?? [],
        cmd: raw.Cmd ?? [],
        user: raw.User ?? '',
        workingDir: raw.WorkingDir ?? '',
        labels: raw.Labels ?? {},
      };
      return new Container(buildah, name, config);
    } catch (e) {
      buildah.run(['rm', name], 30_000);
      throw e;
    }
  }

  /** Runs the image's entrypoint with `args` (as a pod without `command:` would), as the image's user. */
  exec(args: readonly string[], timeoutMs: number, volumes: readonly string[] = []): RunResult {
    return this.buildah.run(this.#runArgs([...this.config.entrypoint, ...args], volumes), timeoutMs);
  }

  /** Starts the entrypoint with `args` in the background; stop() ends it (SIGTERM, then SIGKILL). */
  start(args: readonly string[], volumes: readonly string[] = []): Background {
    return new Background(this.buildah.spawn(this.#runArgs([...this.config.entrypoint, ...args], volumes)));
  }

  /** Whether `path` exists in the image's file system (read through buildah mount). */
  exists(path: string): boolean {
    const mount = this.buildah.must(['mount', this.name], 30_000).trim();
    return existsSync(join(mount, path));
  }

  remove(): void {
    if (this.#removed) return;
    this.#removed = true;
    const r = this.buildah.run(['rm', this.name], 60_000);
    if (r.status !== 0) throw new Error(`buildah rm ${this.name} failed: ${r.stderr}`);
  }

  #runArgs(argv: readonly string[], volumes: readonly string[]): string[] {
    if (argv.length === 0) throw new Error(`${this.name}: the image has no entrypoint and no command was given`);
    return [
      'run',
      '--isolation',
      'chroot',
      '--network',
      'host',
      ...volumes.flatMap((v) => ['--volume', v]),
      this.name,
      '--',
      ...argv,
    ];
  }
}

/** A process started by `buildah run` in its own process group. */
export class Background {
  #output = '';
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (d: Buffer) => (this.#output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.#output += d.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  get output(): string {
    return this.#output;
  }

  /**
   * SIGTERM to the container's process, as kubelet stops a container (signalling `buildah run`
   * itself makes it SIGKILL the process); SIGKILL to the whole group after `graceMs`. Resolves
   * with buildah's exit code, which is the process's.
   */
  async stop(graceMs = 10_000): Promise<number | null> {
    const pid = this.child.pid;
    if (pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    const inside = containerProcesses(pid);
    if (inside.length === 0) process.kill(-pid, 'SIGTERM');
    for (const p of inside) process.kill(p, 'SIGTERM');
    const timer = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** /proc/<pid>/stat -> parent pid; /proc/<pid>/cmdline -> argv[0]. */
function procInfo(pid: number): { ppid: number; argv0: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return { ppid, argv0: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '' };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** The processes `buildah run` (pid `root`) started in the container: children of buildah-chroot-exec. */
export function containerProcesses(root: number): number[] {
  const all = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
  const info = new Map<number, { ppid: number; argv0: string }>();
  for (const p of all) {
    const i = procInfo(p);
    if (i !== undefined) info.set(p, i);
  }
  const inTree = (p: number): boolean => {
    for (let q: number | undefined = p, hops = 0; q !== undefined && q > 1 && hops < 64; q = info.get(q)?.ppid, hops++)
      if (q === root) return true;
    return false;
  };
  return [...info]
    .filter(([, i]) => info.get(i.ppid)?.argv0 === 'buildah-chroot-exec' && inTree(i.ppid))
    .map(([p]) => p);
}

/** buildah on images.sh's private storage. */
export class Buildah {
  constructor(readonly storage: BuiltImages['storage']) {}

  run(args: readonly string[], timeoutMs: number): RunResult {
    const r = spawnSync('buildah', [...this.#global(), ...args], {
      encoding: 'utf8',
      env: this.#env(),
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    });
    if (r.error !== undefined) {
      const what =
        (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT'
          ? `did not finish within ${timeoutMs} ms`
          : r.error.message;
      return { status: null, stdout: r.stdout ?? '', stderr: `buildah ${args.join(' ')} ${what}\n${r.stderr ?? ''}` };
    }
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  must(args: readonly string[], timeoutMs: number): string {
    const r = this.run(args, timeoutMs);
    if (r.status !== 0) throw new Error(`buildah ${args.join(' ')} failed (exit ${r.status}): ${r.stderr.trim()}`);
    return r.stdout;
  }

  spawn(args: readonly string[]): ChildProcess {
    return spawn('buildah', [...this.#global(), ...args], {
      env: this.#env(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  #global(): string[] {
    return ['--root', this.storage.root, '--runroot', this.storage.runroot, '--storage-driver', 'overlay'];
  }

  #env(): NodeJS.ProcessEnv {
    return { ...process.env, CONTAINERS_REGISTRIES_CONF: this.storage.registriesConf };
  }
}

/** Runs `fn` with a working container of `ref`, removed afterwards whatever happens. */
export async function withContainer<T>(
  buildah: Buildah,
  ref: string,
  fn: (c: Container) => Promise<T> | T,
): Promise<T> {
  const c = Container.create(buildah, ref);
  try {
    return await fn(c);
  } finally {
    c.remove();
  }
}

/** `images.sh --check-import`: every archive imports into a throw-away containerd 1.6. */
export function checkImport(names: readonly string[], timeoutMs = 300_000): RunResult {
  const r = spawnSync('bash', [IMAGES_SH, '--check-import', ...names], {
    encoding: 'utf8',
    cwd: REPO_ROOT,
    timeout: timeoutMs,
    killSignal: 'SIGTERM',
  });
  if (r.error !== undefined)
    return {
      status: null,
      stdout: r.stdout ?? '',
      stderr: `${IMAGES_COMMAND} --check-import did not finish within ${timeoutMs} ms: ${r.error.message}`,
    };
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
