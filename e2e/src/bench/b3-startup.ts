// B3: start -> first successful Probe of the production start command (node, fake mode), the
// median of several starts, against the Go reference server's start. A poller (pmem-csi-bench
// load -op first-probe) is already polling the socket path when the process is spawned.
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { median, type FigureSpec } from './figures.js';
import { jsonLines, start, waitForEvent, waitForExit, type HostProcess } from './procs.js';
import type { ScenarioResult } from './scenario.js';
import { startNode, type BenchContext } from './setup.js';

const MiB = 1024 ** 2;

/** Start `spawn` while a poller waits on `socket`; ms from the spawn to the first ready Probe. */
async function timeStart(
  ctx: BenchContext,
  socket: string,
  spawn: () => Promise<{ proc: HostProcess; startedAt: number }>,
): Promise<number> {
  const poller = start(
    'first-probe',
    ctx.bench,
    ['load', '-op', 'first-probe', '-target', `unix://${socket}`, '-duration', '60s'],
    `${socket}.probe.log`,
  );
  let server: HostProcess | undefined;
  try {
    await waitForEvent(poller, 'polling', 10_000);
    const s = await spawn();
    server = s.proc;
    await waitForExit(poller, 70_000);
    const result = jsonLines(poller.log()).find((l) => typeof l['atUnixMs'] === 'number');
    if (result === undefined) throw new Error(`the poller found no ready Probe on ${socket}:\n${poller.log()}`);
    return Number(result['atUnixMs']) - s.startedAt;
  } finally {
    await poller.stop(2000);
    await server?.stop();
  }
}

function refcsiStart(ctx: BenchContext, name: string): Promise<{ proc: HostProcess; startedAt: number }> {
  const dir = join(ctx.dir, name);
  const startedAt = Date.now();
  const proc = start(
    name,
    ctx.bench,
    ['refcsi', '-unix', `unix://${join(dir, 'csi.sock')}`, '-duration', '5m'],
    join(dir, 'refcsi.log'),
  );
  return Promise.resolve({ proc, startedAt });
}

export async function runB3(ctx: BenchContext): Promise<ScenarioResult> {
  const starts = ctx.smoke ? 3 : 7;
  const ours: number[] = [];
  const go: number[] = [];
  for (let i = 0; i < starts; i++) {
    const [name, refName] = [`b3-node-${i}`, `b3-refcsi-${i}`];
    await Promise.all([
      mkdir(join(ctx.dir, name), { recursive: true }),
      mkdir(join(ctx.dir, refName), { recursive: true }),
    ]);
    ours.push(
      await timeStart(ctx, join(ctx.dir, name, 'csi.sock'), () =>
        startNode(ctx, { name, deviceMode: 'fake', sizeBytes: 1024 * MiB }),
      ),
    );
    go.push(await timeStart(ctx, join(ctx.dir, refName, 'csi.sock'), () => refcsiStart(ctx, refName)));
  }
  ctx.say(`  start -> first Probe, ms: ours ${ours.join(' ')}; Go ${go.join(' ')}`);
  const figures: FigureSpec[] = [
    {
      id: 'b3.start-to-probe-ms',
      scenario: 'B3',
      label: `B3 start → first Probe (median of ${starts})`,
      unit: 'ms',
      reference: median(go),
      ours: median(ours),
      target: { kind: 'max', value: 100 },
    },
  ];
  return { figures, details: { startsMs: { ours, go } } };
}
