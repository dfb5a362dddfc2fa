// A real OCI registry for the release and its tests: CNCF distribution's `registry` (built from
// pinned sources by e2e/tools/bootstrap.sh) on 127.0.0.1:<free port> with TLS, storage in a
// directory of the caller's. It stops by itself: the process gets SIGKILL when the Node process
// that started it dies (setpriv --pdeathsig), and after `maxLifetimeMs` in any case.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startHostProcess, tail, type HostProcess } from '../cluster/processes.js';
import { toolPath } from '../tools.js';
import { makeRegistryTls, type RegistryTls } from './tls.js';
import { RegistryClient } from './registry-client.js';

export interface LocalRegistry {
  /** host:port, e.g. 127.0.0.1:41234 */
  readonly host: string;
  readonly tls: RegistryTls;
  readonly client: RegistryClient;
  readonly process: HostProcess;
  stop(): Promise<void>;
}

export interface LocalRegistryOptions {
  /** Directory for the certificates, the configuration, the storage and the log. */
  readonly dir: string;
  /** Upper bound of the registry's life (default 30 min). */
  readonly maxLifetimeMs?: number;
  readonly startTimeoutMs?: number;
  /** The registry binary (default: the pinned one, toolPath('registry')). */
  readonly registryBin?: string;
}

/**
 * `npm run release` arguments of a test's dry run into `registry` (under <host>/pmem-csi, trusting its
 * CA), from a work tree that may have uncommitted changes, the files into `out`.
 */
export function dryRunArgs(registry: Pick<LocalRegistry, 'host' | 'tls'>, version: string, out: string): string[] {
  return [
    '--version',
    version,
    '--dry-run',
    '--allow-dirty',
    '--registry',
    `${registry.host}/pmem-csi`,
    '--registry-ca',
    registry.tls.caFile,
    '--out',
    out,
  ];
}

/** A free TCP port on 127.0.0.1 (closed again: the registry binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr !== null ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function configYaml(dir: string, host: string, tls: RegistryTls): string {
  return [
    'version: 0.1',
    'log:',
    '  level: info',
    '  formatter: text',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${JSON.stringify(join(dir, 'data'))}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: ${host}`,
    '  tls:',
    `    certificate: ${JSON.stringify(tls.certFile)}`,
    `    key: ${JSON.stringify(tls.keyFile)}`,
    '',
  ].join('\n');
}

/** Start the registry and wait until /v2/ answers over TLS; fails with the end of its log. */
export async function startLocalRegistry(options: LocalRegistryOptions): Promise<LocalRegistry> {
  const { dir } = options;
  mkdirSync(join(dir, 'data'), { recursive: true });
  const registryBin = options.registryBin ?? toolPath('registry');
  const tls = await makeRegistryTls(dir);
  const host = `127.0.0.1:${await freePort()}`;
  const config = join(dir, 'config.yml');
  writeFileSync(config, configYaml(dir, host, tls));
  const proc = startHostProcess(
    'registry',
    'setpriv',
    ['--pdeathsig', 'KILL', '--', registryBin, 'serve', config],
    // No tracing exporter (there is no collector), a fixed secret for a single instance.
    {
      logFile: join(dir, 'registry.log'),
      env: { OTEL_TRACES_EXPORTER: 'none', REGISTRY_HTTP_SECRET: 'pmem-csi-test' },
    },
  );
  const lifetime = setTimeout(() => void proc.stop(2_000), options.maxLifetimeMs ?? 30 * 60_000);
  lifetime.unref();
  const client = new RegistryClient(host, tls.caFile);
  const deadline = Date.now() + (options.startTimeoutMs ?? 20_000);
  for (;;) {
    const exited = proc.exited();
    if (exited !== undefined) {
      clearTimeout(lifetime);
      throw new Error(`registry ${host} ended (${exited}) before it answered:\n${tail(proc.log())}`);
    }
    try {
      await client.ping();
      break;
    } catch (e) {
      if (Date.now() > deadline) {
        clearTimeout(lifetime);
        await proc.stop(2_000);
        throw new Error(
          `registry ${host} did not answer /v2/ within the start timeout: ${(e as Error).message}\n${tail(proc.log())}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    host,
    tls,
    client,
    process: proc,
    stop: async () => {
      clearTimeout(lifetime);
      await proc.stop(5_000);
    },
  };
}
