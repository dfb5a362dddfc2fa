// The command line of pmem-csi-driver, generated from the flag schema of @pmem-csi/csi
// (DRIVER_FLAGS) on commander: the driver itself (--mode controller|node) and the subcommands
// local, status and check-tools. --help and --version answer without side effects (no module of a
// mode or subcommand is loaded); an unknown option is refused with the list of valid ones (the
// help follows the error); the flag values are validated by parseDriverFlags, which reports every
// problem at once naming the flag and what is allowed.
import { VOLUME_DEVICE_MODES } from '@pmem-csi/api';
import {
  DRIVER_FLAGS,
  DRIVER_VERSION,
  parseDriverFlags,
  type DriverConfig,
  type DriverFlag,
  type RawFlags,
} from '@pmem-csi/csi';
import { Command, InvalidArgumentError as InvalidOptionValue, Option } from 'commander';

/** The options of `pmem-csi-driver local`. */
export interface LocalFlags {
  readonly keep: boolean;
  readonly fake: boolean;
  /** --state-dir; else $PMEM_CSI_LOCAL_DIR, else <tmpdir>/pmem-csi-local (local/workdir.ts). */
  readonly stateDir: string | undefined;
}

/** The options of `pmem-csi-driver status`. */
export interface StatusFlags {
  readonly url: string | undefined;
  readonly stateDir: string | undefined;
}

/** What each command does; main.ts loads the modules behind them only when one runs. */
export interface CliActions {
  driver(config: DriverConfig): Promise<void>;
  local(flags: LocalFlags): Promise<void>;
  status(flags: StatusFlags): Promise<void>;
  checkTools(modes: readonly string[]): Promise<void>;
}

function flagOption(flag: DriverFlag): Option {
  const defaultText =
    typeof flag.defaultValue === 'string' ? ` (default ${flag.defaultValue === '' ? '""' : flag.defaultValue})` : '';
  const modes = flag.modes.length === 1 ? `[${flag.modes[0]}] ` : '';
  return new Option(
    `--${flag.name} <${flag.valueName}>`,
    `${modes}${flag.description}${flag.required === true ? ' (required)' : ''}${defaultText}`,
  );
}

const STATE_DIR_HELP =
  'sockets, certificates, node state, logs and the lock (default: $PMEM_CSI_LOCAL_DIR, else <tmpdir>/pmem-csi-local); one stack per directory';

function stateDir(value: string): string {
  if (value === '') throw new InvalidOptionValue('a directory is required (omit --state-dir for the default)');
  return value;
}

/** The pmem-csi-driver program; it throws instead of exiting (main.ts decides how to end). */
export function driverProgram(actions: CliActions): Command {
  const program = new Command('pmem-csi-driver')
    .description('PMEM-CSI driver: the central CSI controller (--mode controller) or a node driver (--mode node)')
    .version(`pmem-csi-driver ${DRIVER_VERSION}`, '--version', 'print the version')
    .usage('--mode controller|node [flags]  |  <command> [options]')
    // "usage:" in lower case, as the binary has always printed it (the image tests and the bundle check read it).
    .configureHelp({ styleTitle: (title) => (title === 'Usage:' ? 'usage:' : title) })
    .showHelpAfterError()
    // Errors (and --help/--version) throw CommanderError instead of exiting: main.ts chooses the exit
    // code, the same for the subcommands, which inherit this setting.
    .exitOverride()
    .allowExcessArguments(false)
    // Options before a subcommand are the driver's, after it the subcommand's (both have --state-dir).
    .enablePositionalOptions();
  program.addHelpText(
    'after',
    `
Synopsis:
  pmem-csi-driver --mode controller|node [flags]            run the driver
  pmem-csi-driver local [--keep] [--fake] [--state-dir DIR]  the whole stack on this machine (npm start)
  pmem-csi-driver status [--url URL] [--state-dir DIR]       registered nodes, capacity and volumes
  pmem-csi-driver check-tools [MODE ...]                     the node's host tools found here
  pmem-csi-driver <command> --help                           the options of one command`,
  );
  const options = DRIVER_FLAGS.map((flag) => ({ flag, option: flagOption(flag) }));
  for (const { option } of options) program.addOption(option);
  program.action(async () => {
    const values = program.opts<Record<string, string | undefined>>();
    const raw: RawFlags = Object.fromEntries(
      options.map(({ flag, option }) => [flag.name, values[option.attributeName()]]),
    );
    await actions.driver(parseDriverFlags(raw));
  });
  program
    .command('local')
    .description(
      'the whole stack on this machine (npm start): a controller and three nodes on emulated PMEM, then a demonstration',
    )
    .option('--keep', 'keep the stack running after the demonstration, until Ctrl-C (SIGINT) or SIGTERM')
    .option('--fake', 'fake in-memory devices even as root (default: emulated PMEM on loop devices as root)')
    .option('--state-dir <DIR>', STATE_DIR_HELP, stateDir)
    .action(async (o: { keep?: true; fake?: true; stateDir?: string }) =>
      actions.local({ keep: o.keep === true, fake: o.fake === true, stateDir: o.stateDir }),
    );
  program
    .command('status')
    .description('registered nodes, capacity and volumes of a running controller')
    .option('--url <URL>', "the controller's status URL (default: the local stack's)")
    .option('--state-dir <DIR>', 'the local stack whose status to show (as for local)', stateDir)
    .action(async (o: { url?: string; stateDir?: string }) => actions.status({ url: o.url, stateDir: o.stateDir }));
  program
    .command('check-tools')
    .description('whether this machine (or image) has every host tool the node driver runs in those device modes')
    .argument('[modes...]', `device modes (${VOLUME_DEVICE_MODES.join(', ')}; default: all)`)
    .action(async (modes: string[]) => actions.checkTools(modes));
  return program;
}
