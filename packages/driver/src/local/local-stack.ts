// `pmem-csi-driver local` (npm start): the whole stack on this machine — a controller and three node
// drivers on emulated PMEM (fake devices when not root, and it says so), mutual TLS with
// certificates from our own certificate code — then a guided demonstration. With --keep the stack
// stays up until Ctrl-C so csi-sanity or any CSI client can be pointed at the printed sockets.
import { rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { DEFAULT_DRIVER_NAME } from '@pmem-csi/api';
import { createLogger } from '@pmem-csi/runtime';
import { runDemo } from './demo.js';
import { chooseDeviceMode, startLocalStack, type LocalStack } from './stack.js';
import { localStackDir } from './workdir.js';

const say = (line: string): void => void process.stdout.write(`${line}\n`);

function printSockets(stack: LocalStack): void {
  say(`\nCSI sockets (point csi-sanity or any CSI client at them):`);
  say(`   controller: unix://${stack.controllerSocket}`);
  for (const n of stack.nodes) say(`   ${n.id}:     unix://${n.socket}`);
  say(`   status:     ${stack.statusUrl}/status   (or: npm run status)`);
  say(`   logs:       ${stack.dir}/logs/`);
}

function waitForSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

export async function runLocalStack(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { keep: { type: 'boolean', default: false }, fake: { type: 'boolean', default: false } } });
  const dir = localStackDir();
  const { mode, why } = chooseDeviceMode(values.fake);
  say(`PMEM-CSI local stack in ${dir}`);
  say(`device mode: ${mode} (${why})`);
  say('\n1. Certificates (own CA), controller and 3 node drivers, registering over mutual TLS');
  await rm(`${dir}/nodes`, { recursive: true, force: true });
  const stack = await startLocalStack(dir, mode, createLogger({ level: 'warn' }));
  try {
    say(`   ${stack.nodes.map((n) => n.id).join(', ')} registered`);
    await runDemo(stack, DEFAULT_DRIVER_NAME, say);
    printSockets(stack);
    if (values.keep) {
      say('\nThe stack keeps running; Ctrl-C stops it.');
      await waitForSignal();
    }
  } finally {
    say('\nStopping the node drivers and the controller');
    await stack.stop();
    say('stopped.');
  }
}
