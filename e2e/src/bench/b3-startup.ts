// B3: start -> first successful Probe of the production start command (node, fake mode), the
// median of several starts, against the Go reference server's start. A poller (pmem-csi-bench
// load -op first-probe) is already polling the socket path when the process is spawned.
// The figure is the driver as shipped: with the compile cache tools/bundle.mjs filled beside the
// bundle (the image makes the same). The same starts without it (PMEM_CSI_COMPILE_CACHE='') are
// in the details, measured interleaved in the same run: what the cache does, on this machine, now.
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { COMPILE_CACHE_ENV } from '@pmem-csi/driver';
import { MiB } from '@pmem-csi/csi';
import { median, type FigureSpec } from './figures.js';
import { jsonLines, start, waitForEvent, waitForExit, type HostProcess } from './procs.js';
import type { ScenarioResult } from './scenario.js';
import { startNode, type BenchContext } from './setup.js';

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

/** The node driver's start, with the compile cache off when `cache` is false (the driver reads the variable at start). */
async function nodeStart(ctx: BenchContext, name: string, cache: boolean): Promise<number> {
  await mkdir(join(ctx.dir, name), { recursive: true });
  return timeStart(ctx, join(ctx.dir, name, 'csi.sock'), async () => {
    // The spawned process inherits the environment: set for this spawn only (B3 starts one at a time).
    const saved = process.env[COMPILE_CACHE_ENV];
    if (!cache) process.env[COMPILE_CACHE_ENV] = '';
    try {
      return await startNode(ctx, { name, deviceMode: 'fake', sizeBytes: 1024 * MiB });
    } finally {
      if (saved === undefined) delete process.env[COMPILE_CACHE_ENV];
      else process.env[COMPILE_CACHE_ENV] = saved;
    }
  });
}

export async function runB3(ctx: BenchContext): Promise<ScenarioResult> {
  const starts = ctx.smoke ? 3 : 7;
  const ours: number[] = [];
  const oursNoCache: number[] = [];
  const go: number[] = [];
  for (let i = 0; i < starts; i++) {
    ours.push(await nodeStart(ctx, `b3-node-${i}`, true));
    oursNoCache.push(await nodeStart(ctx, `b3-node-nocache-${i}`, false));
    const refName = `b3-refcsi-${i}`;
    await mkdir(join(ctx.dir, refName), { recursive: true });
    go.push(await timeStart(ctx, join(ctx.dir, refName, 'csi.sock'), () => refcsiStart(ctx, refName)));
  }
  ctx.say(
    `  start -> first Probe, ms: ours ${ours.join(' ')}; without the compile cache ${oursNoCache.join(' ')}` +
      ` (median ${median(oursNoCache)}); Go ${go.join(' ')}`,
  );
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
  return { figures, details: { startsMs: { ours, oursWithoutCompileCache: oursNoCache, go } } };
}
