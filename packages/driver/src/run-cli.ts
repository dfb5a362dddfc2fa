// pmem-csi-driver's command line run to its end (main.ts, the entry point, loads this once the
// compile cache is on; the command line is cli.ts, generated from the flag schema of @pmem-csi/csi).
// Exit codes: 0 done (also --help, --version), 2 a bad command line or a failed command.
import { type DriverConfig, errorMessage, FlagError } from '@pmem-csi/csi';
import { createLogger, levelFromVerbosity } from '@pmem-csi/runtime';
import { CommanderError } from 'commander';
import { driverProgram } from './cli.js';
import type { CompileCacheState } from './compile-cache.js';

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

async function runDriver(config: DriverConfig, compileCache: CompileCacheState): Promise<void> {
  // Each mode's package loads only when it runs (start-up time of the driver itself).
  const { runController, runNode } = await import('./modes.js');
  const log = createLogger({ format: config.logFormat, level: levelFromVerbosity(config.verbosity) }).child({
    mode: config.mode,
  });
  log.debug('compile cache', { ...compileCache });
  const stop = config.mode === 'controller' ? await runController(config, log) : await runNode(config, log);
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    stop().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error('shutdown failed', { error: errorMessage(e) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  watchLocalStack(shutdown);
}

/** Parse `argv` (process.argv) and run what it asks for; exits the process where the command says so. */
export async function runCli(argv: readonly string[], compileCache: CompileCacheState): Promise<void> {
  const program = driverProgram({
    driver: (config) => runDriver(config, compileCache),
    local: async (flags) => {
      const code = await (await import('./local/local-stack.js')).runLocalStack(flags);
      // Everything is stopped and released; an interrupted demonstration may still hold gRPC clients open.
      process.exit(code);
    },
    status: async (flags) => (await import('./local/status-command.js')).printStatus(flags),
    checkTools: async (modes) => {
      process.exitCode = await (await import('./check-tools.js')).runCheckTools(modes);
    },
  });
  try {
    await program.parseAsync([...argv]);
  } catch (e: unknown) {
    // commander has printed its own message (and the help after an error) already.
    if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
    if (e instanceof FlagError) {
      process.stderr.write(`pmem-csi-driver: ${e.message}\n(pmem-csi-driver --help lists every flag)\n`);
      process.exit(2);
    }
    process.stderr.write(`pmem-csi-driver: ${errorMessage(e)}\n`);
    process.exit(2);
  }
}
