// V8 flags the driver sets on itself, per mode, before it loads anything else (main.ts) — the
// flags Node.js refuses in NODE_OPTIONS, so that the pods' NODE_OPTIONS (@pmem-csi/csi
// DRIVER_V8_OPTIONS, rendered by the operator) cannot carry them. Being applied by the binary, they hold
// wherever it runs: the operator's DaemonSet, Helm, kustomize, the local stack, the benchmarks.
//
// node: `--no-maglev`. A node driver is a daemon on every PMEM node whose calls are few; the private
// memory that V8's mid-tier compiler (Maglev) takes under load — its code, the malloc heap its compile
// zones grew — stays with the process. Without it functions go from the interpreter and its baseline
// code straight to TurboFan: the node's private memory after load is lower at the same throughput
// (measured: e2e/bench/README.md, "Figures from the code's comments").
// controller: none (one process per cluster; its memory is its nodes' connections).
//
// The flags are set before the compile cache is turned on: Node.js keys the cache's directory by V8's
// flags at that moment, so each mode reads the byte code made under its own flags
// (warm-compile-cache.ts fills one directory per mode). This file imports only Node.js: main.ts loads it
// before the cache is on (the one import from @pmem-csi/csi is a type, gone at run time).
import { setFlagsFromString } from 'node:v8';
import type { DriverMode } from '@pmem-csi/csi';

/** V8 flags each mode sets on itself at start (none of them allowed in NODE_OPTIONS). */
export const DRIVER_V8_RUNTIME_FLAGS: Readonly<Record<DriverMode, readonly string[]>> = {
  node: ['--no-maglev'],
  controller: [],
};

/** The driver mode `argv` asks for (`--mode node` or `--mode=node`; the last one wins, as the flag parser takes it). */
export function modeOf(argv: readonly string[]): DriverMode | undefined {
  let mode: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') break;
    if (arg === '--mode') mode = argv[++i];
    else if (arg.startsWith('--mode=')) mode = arg.slice('--mode='.length);
  }
  return mode !== undefined && Object.hasOwn(DRIVER_V8_RUNTIME_FLAGS, mode) ? (mode as DriverMode) : undefined;
}

/**
 * Set the V8 flags of the mode `argv` asks for; returns them (none without a valid --mode: the flag
 * parser then reports the mistake, and --help, --version and the subcommands run with V8's defaults).
 */
export function applyModeV8Flags(
  argv: readonly string[],
  set: (flags: string) => void = setFlagsFromString,
): readonly string[] {
  const mode = modeOf(argv);
  const flags = mode === undefined ? [] : DRIVER_V8_RUNTIME_FLAGS[mode];
  for (const flag of flags) set(flag);
  return flags;
}
