// Entry script of the restart test, run as its own process (`node --conditions=@pmem-csi/source
// --import tsx node-process.ts`): one node's services on a unix socket with the emulated device
// manager and a state directory, after the start-up reconcile. PMEM_CSI_CRASH_AT names a step of
// volume creation/deletion at which the process SIGKILLs itself — the crash hook exists only here,
// production code merely calls the optional hook object.
//   PMEM_CSI_TEST_DIR  state directory (socket csi.sock, records volumes/, backing files emulated/)
//   PMEM_CSI_CRASH_AT  optional: create:after-record | create:after-device | delete:after-device
// Prints one JSON line to stdout when serving: {"ready":true,"reconciled":{volumes,droppedRecords,orphans}}.
import { join } from 'node:path';
import { createLogger, HostRunner } from '@pmem-csi/runtime';
import { EmulatedDeviceManager } from '../device/emulated.js';
import { reconcile } from '../state/reconcile.js';
import { VolumeStateStore } from '../state/volume-store.js';
import { VOLUME_STEPS, type VolumeHooks, type VolumeStep } from '../volumes/hooks.js';
import { startTestNode } from './test-node.js';
import { MiB } from '@pmem-csi/csi';

function crashHooks(at: string | undefined): VolumeHooks | undefined {
  if (at === undefined || at === '') return undefined;
  if (!VOLUME_STEPS.includes(at as VolumeStep))
    throw new Error(`PMEM_CSI_CRASH_AT=${at} is not one of ${VOLUME_STEPS.join(', ')}`);
  return {
    reached(step) {
      if (step === at) process.kill(process.pid, 'SIGKILL');
    },
  };
}

async function main(): Promise<void> {
  const dir = process.env['PMEM_CSI_TEST_DIR'];
  if (dir === undefined || dir === '') throw new Error('PMEM_CSI_TEST_DIR is required');
  const log = createLogger({ level: 'info', fields: { pid: process.pid } });
  const runner = new HostRunner();
  const dm = new EmulatedDeviceManager({ runner, log, dir: join(dir, 'emulated'), totalSize: 1024 * MiB });
  await dm.setup();
  const state = new VolumeStateStore({ dir: join(dir, 'volumes'), log });
  await state.init();
  const result = await reconcile(state, dm, log);
  const node = await startTestNode({
    dm,
    dir,
    runner,
    log,
    state,
    hooks: crashHooks(process.env['PMEM_CSI_CRASH_AT']),
  });
  process.once('SIGTERM', () => {
    void node
      .stop()
      .then(() => state.close())
      .then(() => dm.close())
      .then(() => process.exit(0));
  });
  const ids = (list: ReadonlyArray<{ volumeId: string } | { record: { volumeId: string } }>): string[] =>
    list.map((x) => ('record' in x ? x.record.volumeId : x.volumeId));
  const reconciled = {
    volumes: ids(result.volumes),
    droppedRecords: ids(result.droppedRecords),
    orphans: ids(result.orphans),
  };
  process.stdout.write(`${JSON.stringify({ ready: true, reconciled })}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`node-process failed: ${(e as Error).message}\n`);
  process.exit(1);
});
