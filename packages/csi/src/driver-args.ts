// pmem-csi-driver's argument lists (the schema: driver-flags.ts): the operator renders the controller
// Deployment's and the node DaemonSet's arguments from a configuration and reads values back from
// live objects, also in the spellings of other drivers and operators.
import { DRIVER_FLAGS, type ControllerConfig, type NodeConfig, type RawFlags } from './driver-flags.js';

/** The arguments an installer passes: the mode and any subset of its configuration (values may hold $(VAR) references). */
export type DriverArgs =
  | ({ readonly mode: 'controller' } & {
      readonly [K in Exclude<keyof ControllerConfig, 'mode'>]?: ControllerConfig[K];
    })
  | ({ readonly mode: 'node' } & { readonly [K in Exclude<keyof NodeConfig, 'mode'>]?: NodeConfig[K] | string });

/** Render `args` as --flag=value arguments, in DRIVER_FLAGS order (mode first). */
export function renderDriverArgs(args: DriverArgs): string[] {
  const values: Readonly<Record<string, string | number | undefined>> = args;
  const out: string[] = [];
  for (const flag of DRIVER_FLAGS) {
    if (!flag.modes.includes(args.mode)) continue;
    const value = values[flag.key];
    if (value !== undefined) out.push(`--${flag.name}=${value}`);
  }
  return out;
}

/** The value of flag `name` in rendered arguments (also its legacy spellings, with one or two dashes), if present. */
export function driverArgValue(args: readonly string[], name: string): string | undefined {
  const flag = DRIVER_FLAGS.find((f) => f.name === name);
  if (flag === undefined)
    throw new RangeError(
      `pmem-csi-driver has no flag --${name}; flags: ${DRIVER_FLAGS.map((f) => `--${f.name}`).join(', ')}`,
    );
  const names = [flag.name, ...(flag.legacyNames ?? [])];
  for (const [i, arg] of args.entries()) {
    const m = /^--?([^=]+)(?:=(.*))?$/s.exec(arg);
    if (m === null || !names.includes(m[1] ?? '')) continue;
    return m[2] ?? args[i + 1];
  }
  return undefined;
}

/** Every flag found in rendered arguments, by flag name (the input of parseDriverFlags). */
export function readDriverArgs(args: readonly string[]): RawFlags {
  const raw: Record<string, string> = {};
  for (const flag of DRIVER_FLAGS) {
    const value = driverArgValue(args, flag.name);
    if (value !== undefined) raw[flag.name] = value;
  }
  return raw;
}
