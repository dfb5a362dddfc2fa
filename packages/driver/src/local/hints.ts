// What the local stack says at the end of its demonstration. The CSI sockets and `npm run status`
// are worth printing only when they stay usable, that is with --keep; without it the stack is torn
// down a moment later, and before, the hints to "point csi-sanity at" sockets that were already gone
// were printed anyway. Without --keep one line says how to keep the stack up instead.
import type { LocalFlags } from '../cli.js';

/** The parts of a running stack the hints name. */
export interface HintedStack {
  readonly dir: string;
  readonly controllerSocket: string;
  readonly statusUrl: string;
  readonly nodes: ReadonlyArray<{ readonly id: string; readonly socket: string }>;
}

/** A word as a POSIX shell reads it back unchanged (quoted only when it must be). */
function shellWord(word: string): string {
  return /^[\w./:=,@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The command that runs this stack again and keeps it up (the user's own options repeated). */
export function keepCommand(flags: LocalFlags): string {
  const stateDir = flags.stateDir === undefined ? '' : ` --state-dir ${shellWord(flags.stateDir)}`;
  return `npm start -- --keep${flags.fake ? ' --fake' : ''}${stateDir}`;
}

/** Printed after the demonstration while the stack stays up (--keep): the sockets, the status and the logs. */
export function keepHints(stack: HintedStack): string[] {
  return [
    '',
    'CSI sockets (point csi-sanity or any CSI client at them):',
    `   controller: unix://${stack.controllerSocket}`,
    ...stack.nodes.map((n) => `   ${n.id}:     unix://${n.socket}`),
    `   status:     ${stack.statusUrl}/status   (or: npm run status)`,
    `   logs:       ${stack.dir}/logs/`,
    '',
    'The stack keeps running; Ctrl-C (or SIGTERM) stops it.',
  ];
}

/** Printed once the stack is torn down after a run without --keep. */
export function tornDownHint(flags: LocalFlags, dir: string): string {
  return `the stack is torn down now (its logs stay in ${dir}/logs/); run \`${keepCommand(flags)}\` to keep it up and get the sockets`;
}
