#!/usr/bin/env node
// Entry point of pmem-csi-driver.
//   pmem-csi-driver --mode controller|node [flags]   run the driver (see --help)
//   pmem-csi-driver local [--keep] [--fake]          the whole stack on this machine (npm start)
//   pmem-csi-driver status [--url URL]               registered nodes, capacity and volumes
//   pmem-csi-driver check-tools [MODE ...]           the node's host tools found here (images)
//   pmem-csi-driver --version
import { createLogger, errorMessage, levelFromVerbosity } from '@pmem-csi/runtime';
import { FlagError, USAGE, parseFlags } from './flags.js';
import { DRIVER_VERSION, runController, runNode } from './modes.js';

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
}

async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h') {
    process.stdout.write(`${USAGE}\n  pmem-csi-driver local [--keep] [--fake]\n  pmem-csi-driver status [--url URL]\n  pmem-csi-driver check-tools [MODE ...]\n  pmem-csi-driver --version\n`);
    return;
  }
  if (first === '--version') {
    process.stdout.write(`pmem-csi-driver ${DRIVER_VERSION}\n`);
    return;
  }
  // The subcommands' modules load only when asked for (start-up time of the driver itself).
  if (first === 'local') return (await import('./local/local-stack.js')).runLocalStack(rest);
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
