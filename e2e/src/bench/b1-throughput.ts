// B1: CreateVolume+DeleteVolume pairs straight to a node's node-controller over mutual TLS (single
// hop; fake devices, node state on disk) against the same pairs on the Go reference server, the
// same pairs end to end (controller socket -> mTLS -> node), GetPluginInfo on the node's CSI
// socket against the reference, and the server CPU per pair. Ours and the reference alternate.
// Also the node's resident memory idle and after this load (reported as B3 figures).
import { setTimeout as sleep } from 'node:timers/promises';
import { GiB } from '@pmem-csi/csi';
import { median, type FigureSpec } from './figures.js';
import { pidOf, rssAnonMiB, rssMiB } from './procs.js';
import { loadSeconds, runLoad, waitAvailable, type LoadRun, type ScenarioResult } from './scenario.js';
import { goTls, startController, startNode, startRefCsi, type BenchContext } from './setup.js';

interface Side {
  readonly name: 'ours' | 'go';
  readonly args: string[];
  readonly pid: number;
}

interface Series {
  readonly runs: LoadRun[];
  readonly perSec: number;
  /** Server CPU ms per operation over all runs. */
  readonly cpuMsPerOp: number;
}

function series(runs: LoadRun[], server: string): Series {
  const ops = runs.reduce((a, r) => a + r.ops, 0);
  const cpu = runs.reduce((a, r) => a + (r.serverCpu[server] ?? 0), 0);
  return { runs, perSec: median(runs.map((r) => r.opsPerSec)), cpuMsPerOp: ops === 0 ? 0 : (cpu * 1000) / ops };
}

/** Alternate ours and the reference for `rounds` rounds of the same load. */
async function alternate(
  ctx: BenchContext,
  sides: readonly Side[],
  load: readonly string[],
): Promise<Record<string, Series>> {
  const runs: Record<string, LoadRun[]> = {};
  for (let round = 0; round < ctx.rounds; round++) {
    for (const side of sides) {
      const run = await runLoad(ctx, [...side.args, ...load], { [side.name]: side.pid });
      (runs[side.name] ??= []).push(run);
    }
  }
  return Object.fromEntries(sides.map((s) => [s.name, series(runs[s.name] ?? [], s.name)]));
}

export async function runB1(ctx: BenchContext): Promise<ScenarioResult> {
  const ctl = await startController(ctx, 'b1-controller', 6);
  const node = await startNode(ctx, {
    name: 'b1-node',
    deviceMode: 'fake',
    sizeBytes: 64 * GiB,
    registryPort: ctl.registryPort,
  });
  const ref = await startRefCsi(ctx, 'b1-refcsi');
  try {
    await waitAvailable(ctl, 1, { timeoutMs: 60_000 });
    await sleep(2000);
    const [nodePid, refPid, ctlPid] = [pidOf(node.proc), pidOf(ref.proc), pidOf(ctl.proc)];
    const idle = await ctx.measure(['b3.rss-idle-mib', 'b3.rss-anon-idle-mib'], () =>
      Promise.resolve(memOf(nodePid, refPid)),
    );
    const secs = ['-duration', `${loadSeconds(ctx)}s`];
    const client = goTls(ctx.certs.registry);
    const single: Side[] = [
      { name: 'ours', args: ['-target', node.nodeController, ...client], pid: nodePid },
      { name: 'go', args: ['-target', ref.tcp, ...client], pid: refPid },
    ];
    ctx.say('  warm-up (unmeasured): 300 pairs on each side');
    for (const s of single) await runLoad(ctx, [...s.args, '-op', 'pairs', '-c', '8', '-count', '300']);
    const pairs: Record<string, Record<string, Series>> = {};
    for (const c of [1, 32]) {
      ctx.say(`  single hop c=${c}: ours vs Go, ${ctx.rounds} round(s) of ${loadSeconds(ctx)} s`);
      const ids = [
        `b1.single-hop.c${c}.pairs-per-s`,
        ...(c === 32 ? ['b1.single-hop.c32.server-cpu-ms-per-pair'] : []),
      ];
      pairs[`c${c}`] = await ctx.measure(ids, () => alternate(ctx, single, ['-op', 'pairs', '-c', String(c), ...secs]));
    }
    ctx.say('  GetPluginInfo c=32 on the CSI sockets');
    const info = await ctx.measure(['b1.info.c32.calls-per-s'], () =>
      alternate(
        ctx,
        [
          { name: 'ours', args: ['-target', `unix://${node.socket}`], pid: nodePid },
          { name: 'go', args: ['-target', `unix://${ref.socket}`], pid: refPid },
        ],
        ['-op', 'info', '-c', '32', ...secs],
      ),
    );
    // End to end last: the controller answers CreateVolume only after its start-up settle period.
    ctx.say('  end to end: waiting for the controller to settle, then 300 pairs of warm-up');
    await runLoad(ctx, [
      '-target',
      `unix://${ctl.socket}`,
      '-op',
      'pairs',
      '-c',
      '8',
      '-count',
      '300',
      '-wait-ready',
      '300s',
    ]);
    const e2e: Record<string, Series> = {};
    for (const c of [1, 32]) {
      ctx.say(`  end to end c=${c}`);
      const runs: LoadRun[] = [];
      await ctx.measure([`b1.e2e.c${c}.pairs-per-s`], async () => {
        for (let round = 0; round < ctx.rounds; round++) {
          runs.push(
            await runLoad(ctx, ['-target', `unix://${ctl.socket}`, '-op', 'pairs', '-c', String(c), ...secs], {
              ours: nodePid,
              controller: ctlPid,
            }),
          );
        }
      });
      e2e[`c${c}`] = series(runs, 'ours');
    }
    const afterLoad = await ctx.measure(['b3.rss-after-load-mib', 'b3.rss-anon-after-load-mib'], () =>
      Promise.resolve(memOf(nodePid, refPid)),
    );
    return {
      figures: b1Figures({ pairs, e2e, info, idle, afterLoad }),
      details: { pairs, e2e, info, rssMiB: { idle, afterLoad } },
    };
  } finally {
    await Promise.all([node.proc.stop(), ref.proc.stop()]);
    await ctl.proc.stop();
  }
}

/** RSS and its private part (RssAnon) of our node and the Go reference, MiB. */
interface NodeMemory {
  readonly ours: number;
  readonly go: number;
  readonly oursAnon: number;
  readonly goAnon: number;
}

function memOf(nodePid: number, refPid: number): NodeMemory {
  return { ours: rssMiB(nodePid), go: rssMiB(refPid), oursAnon: rssAnonMiB(nodePid), goAnon: rssAnonMiB(refPid) };
}

interface B1Data {
  readonly pairs: Record<string, Record<string, Series>>;
  readonly e2e: Record<string, Series>;
  readonly info: Record<string, Series>;
  readonly idle: NodeMemory;
  readonly afterLoad: NodeMemory;
}

function b1Figures(d: B1Data): FigureSpec[] {
  const out: FigureSpec[] = [];
  const perSec = (s: Series | undefined): number | null => s?.perSec ?? null;
  for (const c of [1, 32]) {
    const p = d.pairs[`c${c}`];
    const ours = perSec(p?.['ours']);
    out.push({
      id: `b1.single-hop.c${c}.pairs-per-s`,
      scenario: 'B1',
      label: `B1 pairs/s single hop c=${c}`,
      unit: '/s',
      reference: perSec(p?.['go']),
      ours,
      // Issue 28 (round 3): ≥ 0.25× now, 0.5× the goal.
      target: { kind: 'ratio-min', value: 0.25, of: 'Go' },
    });
    out.push({
      id: `b1.e2e.c${c}.pairs-per-s`,
      scenario: 'B1',
      label: `B1 pairs/s end to end c=${c}`,
      unit: '/s',
      reference: null,
      ours: perSec(d.e2e[`c${c}`]),
      ...(ours === null ? {} : { base: ours }),
      target: { kind: 'ratio-min', value: 0.85, of: 'single hop' },
    });
  }
  const p32 = d.pairs['c32'];
  out.push({
    id: 'b1.single-hop.c32.server-cpu-ms-per-pair',
    scenario: 'B1',
    label: 'B1 server CPU per pair, single hop c=32',
    unit: 'ms',
    reference: p32?.['go']?.cpuMsPerOp ?? null,
    ours: p32?.['ours']?.cpuMsPerOp ?? null,
    target: { kind: 'ratio-max', value: 4, of: 'Go' },
  });
  out.push({
    id: 'b1.info.c32.calls-per-s',
    scenario: 'B1',
    label: 'B1 GetPluginInfo/s c=32 (CSI socket)',
    unit: '/s',
    reference: perSec(d.info['go']),
    ours: perSec(d.info['ours']),
    target: { kind: 'ratio-min', value: 0.55, of: 'Go' },
  });
  out.push({
    id: 'b3.rss-idle-mib',
    scenario: 'B3',
    label: 'B3 node RSS idle',
    unit: 'MiB',
    reference: d.idle.go,
    ours: d.idle.ours,
    target: { kind: 'max', value: 40 },
  });
  out.push({
    id: 'b3.rss-after-load-mib',
    scenario: 'B3',
    label: 'B3 node RSS after B1 load',
    unit: 'MiB',
    reference: d.afterLoad.go,
    ours: d.afterLoad.ours,
    target: { kind: 'max', value: 80 },
  });
  // Without target: the private part of each RSS above (the rest is the binary's file pages).
  out.push({
    id: 'b3.rss-anon-idle-mib',
    scenario: 'B3',
    label: 'B3 node RssAnon idle (private)',
    unit: 'MiB',
    reference: d.idle.goAnon,
    ours: d.idle.oursAnon,
  });
  out.push({
    id: 'b3.rss-anon-after-load-mib',
    scenario: 'B3',
    label: 'B3 node RssAnon after B1 load (private)',
    unit: 'MiB',
    reference: d.afterLoad.goAnon,
    ours: d.afterLoad.oursAnon,
  });
  return out;
}
