// Crash safety of staging a Kata Containers volume (issue 26): a node process on emulated PMEM is
// SIGKILLed inside NodeStageVolume — after the partial image's header (before its filesystem), and
// after the complete image (before its loop device) — then restarted; the kubelet's retried stage
// must finish (the partial image rebuilt, the complete one kept), publish must work and take data,
// and unpublish/unstage/delete must leave no loop device, mount or file behind. Needs root and loop
// devices; without them it FAILS with the reason.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { spawn, type ChildProcess } from 'node:child_process';
import { access, mkdtemp, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HostRunner, loadCsi, unary, type ControllerClient, type NodeClient } from '@pmem-csi/runtime';
import { nodeTools, MiB } from '@pmem-csi/csi';
import { detachImage, imageLoopDevices, imagePath } from '../kata/image-file.js';
import { findMountAt } from '../mount/findmnt.js';
import type { VolumeStep } from '../volumes/hooks.js';
import { cleanUpHostDir, hostTestProblems } from '../testing/host-cleanup.js';
import { mountCapability } from '../testing/test-node.js';

const host = new HostRunner();
const here = dirname(fileURLToPath(import.meta.url));
const ENTRY = join(here, '..', 'testing', 'node-process.ts');
const REPO = resolve(here, '../../../..');
const T = { timeoutMs: 60_000 };
jest.setTimeout(180_000);

interface NodeProcess {
  child: ChildProcess;
  controller: ControllerClient;
  node: NodeClient;
  exited: Promise<NodeJS.Signals | number | null>;
}

describe('node process killed while staging a Kata volume (emulated PMEM)', () => {
  let dir = '';
  let proc: NodeProcess | undefined;
  const stagings: string[] = [];
  const targets: string[] = [];

  async function startNode(crashAt?: VolumeStep): Promise<NodeProcess> {
    const child = spawn(process.execPath, ['--conditions=@pmem-csi/source', '--import', 'tsx', ENTRY], {
      cwd: REPO,
      env: { ...process.env, PMEM_CSI_TEST_DIR: dir, PMEM_CSI_CRASH_AT: crashAt ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stderr: string[] = [];
    child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
    const exited = new Promise<NodeJS.Signals | number | null>((r) =>
      child.on('exit', (code, signal) => r(signal ?? code)),
    );
    await new Promise<void>((ready, reject) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('"ready":true')) ready();
      });
      void exited.then((how) =>
        reject(new Error(`node process exited (${String(how)}) before it was ready: ${stderr.join('').slice(-2000)}`)),
      );
    });
    const csi = loadCsi().csi.v1;
    const address = `unix://${join(dir, 'csi.sock')}`;
    const creds = grpc.credentials.createInsecure();
    return { child, controller: new csi.Controller(address, creds), node: new csi.Node(address, creds), exited };
  }

  async function stopNode(): Promise<void> {
    if (proc === undefined) return;
    proc.controller.close();
    proc.node.close();
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGTERM');
    await proc.exited;
    proc = undefined;
  }

  beforeAll(async () => {
    const problems = await hostTestProblems(host, [...nodeTools('emulated'), 'fallocate']);
    await access(ENTRY).catch(() => problems.push(`entry script ${ENTRY} is missing`));
    if (problems.length > 0) throw new Error(`Kata restart tests cannot run on this machine: ${problems.join('; ')}`);
    dir = await realpath(await mkdtemp(join(tmpdir(), 'pmem-csi-kata-restart-')));
  });

  afterAll(async () => {
    if (proc !== undefined) proc.child.kill('SIGKILL');
    await proc?.exited;
    for (const t of targets) await host.run('umount', [t]).catch(() => undefined);
    for (const s of stagings) await detachImage(host, imagePath(s)).catch(() => undefined);
    if (dir !== '') await cleanUpHostDir(host, dir);
  });

  it.each([
    ['kata:image-partial', ['.kata-containers-pmem-csi-vm.img.partial', 'lost+found'], 0],
    ['kata:after-image', ['kata-containers-pmem-csi-vm.img', 'lost+found'], 0],
  ] as Array<[VolumeStep, string[], number]>)(
    'killed at %s: the retried stage finishes, publish takes data, nothing is left after delete',
    async (step, leftAfterCrash, loopsAfterCrash) => {
      const staging = join(dir, `stage-${step.replace(':', '-')}`);
      const target = join(dir, `target-${step.replace(':', '-')}`);
      stagings.push(staging);
      targets.push(target);
      proc = await startNode(step);
      const created = await unary(
        proc.controller,
        proc.controller.CreateVolume,
        {
          name: `kata-${step}`,
          capacity_range: { required_bytes: String(64 * MiB) },
          volume_capabilities: [mountCapability()],
          parameters: { kataContainers: 'true' },
        },
        T,
      );
      const id = created.volume?.volume_id ?? '';
      const stage = { volume_id: id, staging_target_path: staging, volume_capability: mountCapability() };
      const err = await unary(proc.node, proc.node.NodeStageVolume, stage, T).then(
        () => undefined,
        (e: grpc.ServiceError) => e,
      );
      expect(err?.code).toBe(grpc.status.UNAVAILABLE);
      expect(await proc.exited).toBe('SIGKILL');
      proc = undefined;
      // What the crash left: the volume mounted at the staging path, the image as far as it got.
      expect(await findMountAt(host, staging)).toBeDefined();
      expect((await readdir(staging)).sort()).toEqual(leftAfterCrash);
      expect(await imageLoopDevices(host, imagePath(staging))).toHaveLength(loopsAfterCrash);

      proc = await startNode();
      await unary(proc.node, proc.node.NodeStageVolume, stage, T);
      expect((await readdir(staging)).sort()).toEqual(['kata-containers-pmem-csi-vm.img', 'lost+found']);
      expect(await imageLoopDevices(host, imagePath(staging))).toHaveLength(1);
      await unary(
        proc.node,
        proc.node.NodePublishVolume,
        { volume_id: id, staging_target_path: staging, target_path: target, volume_capability: mountCapability() },
        T,
      );
      await writeFile(join(target, 'after-crash'), step);
      expect(await readFile(join(target, 'after-crash'), 'utf8')).toBe(step);
      await unary(proc.node, proc.node.NodeUnpublishVolume, { volume_id: id, target_path: target }, T);
      await unary(proc.node, proc.node.NodeUnstageVolume, { volume_id: id, staging_target_path: staging }, T);
      expect(await findMountAt(host, staging)).toBeUndefined();
      expect((await host.run('losetup', ['--json', '--list'])).stdout).not.toContain(staging);
      await unary(proc.controller, proc.controller.DeleteVolume, { volume_id: id }, T);
      expect((await readdir(join(dir, 'emulated'))).filter((f) => !f.startsWith('.'))).toEqual([]);
      await stopNode();
    },
  );
});
