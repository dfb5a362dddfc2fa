#!/usr/bin/env node
// Entry point of pmem-csi-driver.
//   pmem-csi-driver --mode controller|node [flags]   run the driver (see --help)
//   pmem-csi-driver local [--keep] [--fake] [--state-dir DIR]    the whole stack on this machine (npm start)
//   pmem-csi-driver status [--url URL] [--state-dir DIR]         registered nodes, capacity and volumes
//   pmem-csi-driver check-tools [MODE ...]           the node's host tools found here (images)
//   pmem-csi-driver --version
import { createLogger, errorMessage, levelFromVerbosity } from '@pmem-csi/runtime';
import { FlagError, USAGE, parseFlags } from './flags.js';
import { DRIVER_VERSION } from '@pmem-csi/csi';
import { runController, runNode } from './modes.js';

/**
 * A driver started by the local stack (which names itself in PMEM_CSI_PARENT_PID) stops when the
 * stack is gone, however it went: no orphaned controller or node process.
 */
function watchLocalStack(shutdown: (reason: string) => void): void {
  const stack = Number(process.env['PMEM_CSI_PARENT_PID']);
  if (!Number.isSafeInteger(stack) || stack <= 0) return;
  setInterval(() => {
    if (process.ppid !== stack) shutdown(`the local stack (pid ${stack}) is gone`);
  }, 1000).unref();
}

async function runDriver(argv: string[]): Promise<void> {
  const config = parseFlags(argv);
  const log = createLogger({ format: config.logFormat, level: levelFromVerbosity(config.verbosity) }).child({ mode: config.mode });
  const stop = config.mode === 'controller' ? await runController(config, log) : await runNode(config, log);
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    stop().then(() => process.exit(0), (e: unknown) => {
      log.error('shutdown failed', { error: errorMessage(e) });
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  watchLocalStack(shutdown);
}

async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h') {
    process.stdout.write(`${USAGE}\n  pmem-csi-driver local [--keep] [--fake] [--state-dir DIR]\n  pmem-csi-driver status [--url URL] [--state-dir DIR]\n  pmem-csi-driver check-tools [MODE ...]\n  pmem-csi-driver --version\n`);
    return;
  }
  if (first === '--version') {
    process.stdout.write(`pmem-csi-driver ${DRIVER_VERSION}\n`);
    return;
  }
  // The subcommands' modules load only when asked for (start-up time of the driver itself).
  if (first === 'local') {
    const code = await (await import('./local/local-stack.js')).runLocalStack(rest);
    // Everything is stopped and released; an interrupted demonstration may still hold gRPC clients open.
    process.exit(code);
  }
  if (first === 'status') return (await import('./local/status-command.js')).printStatus(rest);
  if (first === 'check-tools') {
    process.exitCode = await (await import('./check-tools.js')).runCheckTools(rest);
    return;
  }
  return runDriver(argv);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  const msg = e instanceof FlagError ? `${e.message}\n\n${USAGE}` : errorMessage(e);
  process.stderr.write(`pmem-csi-driver: ${msg}\n`);
  process.exit(2);
});
