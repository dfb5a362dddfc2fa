// What every scenario needs: the production driver build, the Go tools (bootstrap.sh), a work
// directory with certificates from the project's own CA code, and starting the production
// driver processes (`node packages/driver/dist/bundle/pmem-csi-driver.mjs --mode ...`, the bundle
// the driver image runs; default flags otherwise).
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DRIVER_V8_OPTIONS, renderDriverArgs } from '@pmem-csi/csi';
import { freePort, makeLocalCerts } from '@pmem-csi/driver';
import { DEFAULT_KEY_TYPE, keyTypeOf, type KeyType, type TlsFiles } from '@pmem-csi/runtime';
import { runTool } from '../cluster/processes.js';
import { start, waitForEvent, type HostProcess } from './procs.js';

export interface BenchCerts {
  /** The controller's identity (pmem-registry); also the client identity of calls to a node-controller. */
  readonly registry: TlsFiles;
  /** The nodes' identity (pmem-node-controller); also what the swarm and refcsi serve with. */
  readonly nodeController: TlsFiles;
}

export interface BenchContext {
  readonly repo: string;
  /** Work directory of this run: certificates, sockets, state directories, logs. */
  readonly dir: string;
  /** The Go tools binary (pmem-csi-bench). */
  readonly bench: string;
  /** packages/driver/dist/bundle/pmem-csi-driver.mjs: the production build (what the image runs). */
  readonly driverMain: string;
  readonly certs: BenchCerts;
  readonly smoke: boolean;
  /** Alternating rounds of ours and the reference per figure. */
  readonly rounds: number;
  say(line: string): void;
  /**
   * Run one measurement and record the 1-min load average when it started and ended as the load
   * of the figures `ids` (printed beside each figure and kept in the JSON; main.ts's LoadLog).
   */
  measure<T>(ids: readonly string[], fn: () => Promise<T>): Promise<T>;
}

/** The driver bundle (production build, tools/bundle.mjs) and the Go tools through bootstrap.sh; returns the tool path. */
export async function buildAll(
  repo: string,
  say: (line: string) => void,
): Promise<{ bench: string; driverMain: string }> {
  say('building the driver: node tools/bundle.mjs');
  await runTool(process.execPath, [join(repo, 'tools/bundle.mjs')], { cwd: repo, timeoutMs: 5 * 60_000 });
  const driverMain = join(repo, 'packages/driver/dist/bundle/pmem-csi-driver.mjs');
  if (!existsSync(driverMain)) throw new Error(`the build made no ${driverMain}`);
  say('building the Go tools: bash e2e/tools/bootstrap.sh bench-tools');
  await runTool('bash', ['e2e/tools/bootstrap.sh', 'bench-tools'], { cwd: repo, timeoutMs: 30 * 60_000 });
  const env = (
    await runTool('bash', ['e2e/tools/bootstrap.sh', '--print-env', 'bench-tools'], { cwd: repo, timeoutMs: 60_000 })
  ).stdout;
  const m = /^export PMEM_CSI_PMEM_CSI_BENCH=(.+)$/m.exec(env);
  if (m?.[1] === undefined)
    throw new Error(`bootstrap.sh --print-env bench-tools printed no PMEM_CSI_PMEM_CSI_BENCH:\n${env}`);
  return { bench: m[1].replace(/^'(.*)'$/, '$1'), driverMain };
}

/**
 * A CA and the two identities, issued like the operator does: the runtime's default key type, or
 * PMEM_CSI_BENCH_KEY_TYPE (e.g. rsa-3072, to compare; see the README's "Controller at 5,000 nodes").
 */
export function makeCerts(dir: string, keyType: KeyType = benchKeyType()): Promise<BenchCerts> {
  return makeLocalCerts(dir, { keyType, validityDays: 2, commonName: 'pmem-csi bench CA' });
}

/** The key type of the bench's certificates; an unknown PMEM_CSI_BENCH_KEY_TYPE is refused naming it. */
export function benchKeyType(env: NodeJS.ProcessEnv = process.env): KeyType {
  const wanted = env['PMEM_CSI_BENCH_KEY_TYPE'];
  if (wanted === undefined || wanted === '') return DEFAULT_KEY_TYPE;
  try {
    return keyTypeOf({ keyType: wanted as KeyType });
  } catch (e) {
    throw new Error(`PMEM_CSI_BENCH_KEY_TYPE: ${(e as Error).message}`);
  }
}

/** -ca/-cert/-key flags of the Go tools. */
export function goTls(f: TlsFiles): string[] {
  return ['-ca', f.caFile, '-cert', f.certFile, '-key', f.keyFile];
}

export interface Controller {
  readonly proc: HostProcess;
  readonly socket: string;
  readonly registryPort: number;
  readonly statusUrl: string;
}

/** The production controller with its registry and status endpoint on free 127.0.0.1 ports. */
export async function startController(ctx: BenchContext, name: string, leaseSeconds: number): Promise<Controller> {
  const dir = join(ctx.dir, name);
  await mkdir(dir, { recursive: true });
  const [registryPort, statusPort] = [await freePort(), await freePort()];
  const socket = join(dir, 'csi.sock');
  const proc = start(
    name,
    process.execPath,
    [
      // The V8 options the operator gives the controller's pod (NODE_OPTIONS).
      ...DRIVER_V8_OPTIONS.controller,
      ctx.driverMain,
      ...renderDriverArgs({
        mode: 'controller',
        csiEndpoint: `unix://${socket}`,
        caFile: ctx.certs.registry.caFile,
        certFile: ctx.certs.registry.certFile,
        keyFile: ctx.certs.registry.keyFile,
        registryListen: `127.0.0.1:${registryPort}`,
        metricsListen: `127.0.0.1:${statusPort}`,
        leaseSeconds,
      }),
    ],
    join(dir, 'driver.log'),
  );
  return { proc, socket, registryPort, statusUrl: `http://127.0.0.1:${statusPort}` };
}

export interface NodeProcess {
  readonly proc: HostProcess;
  readonly socket: string;
  /** 127.0.0.1:PORT of its node-controller service (mutual TLS). */
  readonly nodeController: string;
  readonly startedAt: number;
}

export interface NodeSpec {
  readonly name: string;
  readonly deviceMode: 'fake' | 'emulated';
  readonly sizeBytes: number;
  /** Registry port of a controller; without one the node registers with a port nobody serves. */
  readonly registryPort?: number;
}

/** The production node driver; `startedAt` is the Unix ms just before the spawn. */
export async function startNode(ctx: BenchContext, spec: NodeSpec): Promise<NodeProcess> {
  const dir = join(ctx.dir, spec.name);
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const registryPort = spec.registryPort ?? (await freePort());
  const socket = join(dir, 'csi.sock');
  const args = [
    // Measured as the pods run it: the heap limits the operator puts into the node's NODE_OPTIONS.
    ...DRIVER_V8_OPTIONS.node,
    ctx.driverMain,
    ...renderDriverArgs({
      mode: 'node',
      nodeId: spec.name,
      deviceMode: spec.deviceMode,
      csiEndpoint: `unix://${socket}`,
      caFile: ctx.certs.nodeController.caFile,
      certFile: ctx.certs.nodeController.certFile,
      keyFile: ctx.certs.nodeController.keyFile,
      stateDir: join(dir, 'state'),
      emulatedSize: spec.sizeBytes,
      nodeControllerListen: `127.0.0.1:${port}`,
      advertisedEndpoint: `127.0.0.1:${port}`,
      registryEndpoint: `127.0.0.1:${registryPort}`,
    }),
  ];
  const startedAt = Date.now();
  const proc = start(spec.name, process.execPath, args, join(dir, 'driver.log'));
  return { proc, socket, nodeController: `127.0.0.1:${port}`, startedAt };
}

export interface RefCsi {
  readonly proc: HostProcess;
  readonly socket: string;
  /** 127.0.0.1:PORT with mutual TLS. */
  readonly tcp: string;
  readonly startedAt: number;
}

/** The reference server (refcsi) on a unix socket and a TCP port with mutual TLS (node-controller identity). */
export async function startRefCsi(ctx: BenchContext, name: string): Promise<RefCsi> {
  const dir = join(ctx.dir, name);
  await mkdir(dir, { recursive: true });
  const socket = join(dir, 'csi.sock');
  const startedAt = Date.now();
  const proc = start(
    name,
    ctx.bench,
    [
      'refcsi',
      '-unix',
      `unix://${socket}`,
      '-tcp',
      '127.0.0.1:0',
      ...goTls(ctx.certs.nodeController),
      '-duration',
      '30m',
    ],
    join(dir, 'refcsi.log'),
  );
  const ready = await waitForEvent(proc, 'ready', 10_000);
  return { proc, socket, tcp: String(ready['tcp']), startedAt };
}
