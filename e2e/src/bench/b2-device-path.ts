// B2: the emulated device path (root: loop devices, mkfs.ext4, mount) — create, stage, publish,
// unpublish, unstage, delete of one volume at a time through the node driver's RPCs, against the
// same state-changing host commands run by a plain shell script (e2e/bench/emulated-path.sh).
import { join } from 'node:path';
import { chooseDeviceMode } from '@pmem-csi/driver';
import { MiB } from '@pmem-csi/csi';
import { runTool } from '../cluster/processes.js';
import { median, type FigureSpec } from './figures.js';
import { jsonLines } from './procs.js';
import { runLoad, type LoadRun, type ScenarioResult } from './scenario.js';
import { goTls, startNode, type BenchContext } from './setup.js';

const VOLUME_BYTES = 64 * MiB;

interface ScriptReport {
  readonly volumes: number;
  readonly msPerVolume: number;
  readonly stepsMs: Record<string, number>;
}

/** Why B2 cannot run here, or undefined when it can. */
export function b2Unavailable(): string | undefined {
  const { mode, why } = chooseDeviceMode(false);
  return mode === 'emulated' ? undefined : why;
}

async function script(ctx: BenchContext, dir: string, count: number): Promise<ScriptReport> {
  const run = await runTool(
    'bash',
    [join(ctx.repo, 'e2e/bench/emulated-path.sh'), dir, String(count), String(VOLUME_BYTES)],
    { timeoutMs: 10 * 60_000 },
  );
  const last = jsonLines(run.stdout).at(-1);
  if (last === undefined) throw new Error(`emulated-path.sh printed no JSON:\n${run.stdout}\n${run.stderr}`);
  return last as unknown as ScriptReport;
}

export async function runB2(ctx: BenchContext): Promise<ScenarioResult> {
  const count = ctx.smoke ? 3 : 10;
  const node = await startNode(ctx, { name: 'b2-node', deviceMode: 'emulated', sizeBytes: 2048 * MiB });
  try {
    await runLoad(ctx, ['-target', `unix://${node.socket}`, '-op', 'probe', '-count', '1', '-wait-ready', '60s']);
    const ours: LoadRun[] = [];
    const shell: ScriptReport[] = [];
    for (let round = 0; round < ctx.rounds; round++) {
      ctx.say(`  round ${round + 1}: ${count} volumes through the driver, then through the script`);
      ours.push(
        await runLoad(ctx, [
          '-target',
          node.nodeController,
          ...goTls(ctx.certs.registry),
          '-op',
          'lifecycle',
          '-node-target',
          `unix://${node.socket}`,
          '-dir',
          join(ctx.dir, 'b2-mnt', `r${round}`),
          '-count',
          String(count),
          '-size',
          String(VOLUME_BYTES),
          '-c',
          '1',
        ]),
      );
      shell.push(await script(ctx, join(ctx.dir, 'b2-script', `r${round}`), count));
    }
    const oursMs = median(ours.map((r) => (r.ops > 0 ? (r.seconds * 1000) / r.ops : Number.NaN)));
    const figures: FigureSpec[] = [
      {
        id: 'b2.emulated.ms-per-volume',
        scenario: 'B2',
        label: 'B2 emulated create→delete per volume (ref: shell)',
        unit: 'ms',
        reference: median(shell.map((s) => s.msPerVolume)),
        ours: Number.isFinite(oursMs) ? oursMs : null,
        note: 'reference = the same host commands in a shell script',
        target: { kind: 'ratio-max', value: 1.2, of: 'shell' },
      },
    ];
    return { figures, details: { volumeBytes: VOLUME_BYTES, perRound: count, ours, script: shell } };
  } finally {
    await node.proc.stop();
  }
}
