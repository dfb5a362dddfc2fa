// The Go driver's volumes taken over (issue 31), in the QEMU guest of each PMEM mode. Boot 1 builds,
// by the facts of docs/migration.md, what the Go driver (intel/pmem-csi v1.x) leaves on a node:
//   lvm     its volume group <bus><region>fsdax without tags, logical volumes named by volume id
//           (`lvcreate -Zn -L <bytes>B -n <id> <vg>`, first 4 KiB zeroed);
//   direct  fsdax namespaces named by volume id (--map=dev, 1 GiB alignment, the size asked + 1 GiB
//           rounded up to 1 GiB × interleave ways, a random version-1 uuid: no owner mark);
// each with an ext4 filesystem as the Go driver made it (-b 4096 -E stride=512,stripe_width=512)
// holding data, and its record <stateDir>/<id>.json ({"id","size","parameters"}). Then our node
// driver starts on it as the DaemonSet runs it, and must: take the records over, list the volumes
// with their ids and device sizes, place a new volume beside them, stage and publish them with the
// data intact and DAX, leave what a rolled-back Go driver reads as it was (its record files, its
// devices by name, size and identity, the data: docs/migration.md "Rolling back"), delete them
// erasing as their eraseafter says, and count the capacity right.
// The shape it cannot take over (a cache volume's record) is reported with the reason, its device
// stays as it was; the case removes it at the end. It runs last in boot 1, after the reboot case left
// its volumes: namespaces made and destroyed before those would change their order on the PMEM, by
// which the kernel numbers namespaces at boot (seen: boot 2 found namespace1.1 and 1.3 renumbered).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { volumeIdForName } from '@pmem-csi/api';
import { GiB, MiB } from '@pmem-csi/csi';
import type { LogFields } from '@pmem-csi/runtime';
import { MANAGED_VG, vgNameFor } from '../device/lvm-layout.js';
import { LvmTools } from '../device/lvm-tools.js';
import { OWNER_TAG_PREFIX } from '../device/ownership.js';
import { alignUp } from '../device/sizes.js';
import { lvmReportRows } from './guest-lvm.js';
import {
  STATE_DIR,
  SLOW,
  boot1,
  capturingLogger,
  deleteVolume,
  guestLogger,
  isDaxFile,
  isZero,
  pmemRegions,
  publish,
  runner,
  sha256,
  stage,
  startGuestDriver,
  unstage,
  writeSynced,
  type GuestDriver,
} from './guest-kit.js';
import type { ErasedSpace, GuestModeSuite } from './guest-mode.js';
import { call } from './test-node.js';

/** One volume as the Go driver left it. */
interface GoVolume {
  readonly name: string;
  readonly id: string;
  /** The size its CreateVolume asked for (what its record says). */
  readonly asked: number;
  readonly parameters: Record<string, string>;
  path: string;
  sha: string;
}

/** A PV's volume attributes as external-provisioner wrote them for the Go driver (its CreateVolume returned no context). */
const GO_CONTEXT = { 'storage.kubernetes.io/csiProvisionerIdentity': '1623925424000-8081-pmem-csi.intel.com' };

function goVolume(name: string, parameters: Record<string, string> = {}): GoVolume {
  return { name, id: volumeIdForName(name), asked: 64 * MiB, parameters, path: '', sha: '' };
}

/** A version-1 (time-based) uuid as the Go driver's uuid.NewUUID() gave its namespaces. */
function goUuid(): string {
  const h = randomBytes(16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-1${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** ext4 as the Go driver made it, mounted with dax, with 2 MiB of data; returns the data's checksum. */
async function goFilesystem(path: string): Promise<string> {
  await runner.run('mkfs.ext4', ['-b', '4096', '-E', 'stride=512,stripe_width=512', '-F', path]);
  const mnt = await mkdtemp('/tmp/go-fs-');
  await runner.run('mount', ['-o', 'dax', path, mnt]);
  try {
    const data = randomBytes(2 * MiB);
    await writeSynced(join(mnt, 'data'), data);
    return sha256(data);
  } finally {
    await runner.run('umount', [mnt]);
  }
}

/** Its record file, one JSON line as its pmem-state package wrote it. */
async function goRecord(v: GoVolume, deviceMode: string): Promise<void> {
  const parameters = { ...v.parameters, name: v.name, deviceMode };
  await writeFile(join(STATE_DIR, `${v.id}.json`), `${JSON.stringify({ id: v.id, size: v.asked, parameters })}\n`);
}

/** The checksum of the file `data` on the filesystem of `path`, mounted read-only for the read. */
async function dataSha(path: string): Promise<string> {
  const mnt = await mkdtemp('/tmp/go-data-');
  await runner.run('mount', ['-o', 'ro', path, mnt]);
  try {
    return sha256(await readFile(join(mnt, 'data')));
  } finally {
    await runner.run('umount', [mnt]);
  }
}

/** lvm: the Go driver's VG in region 0 (our owner tag taken off: it had none) and an LV per volume. */
async function goLvm(volumes: readonly GoVolume[]): Promise<void> {
  const lvm = new LvmTools(runner);
  const region = (await pmemRegions())[0]!;
  const vg = vgNameFor(region.bus ?? 'ndbus0', region.dev);
  const tags = (await lvm.vgs()).find((g) => g.name === vg)?.tags ?? [];
  for (const tag of tags.filter((t) => t.startsWith(OWNER_TAG_PREFIX)))
    await runner.run('vgchange', ['--deltag', tag, vg]);
  for (const v of volumes) {
    await runner.run('lvcreate', ['-Zn', '-L', `${v.asked}B`, '-n', v.id, vg]);
    v.path = `/dev/${vg}/${v.id}`;
    await runner.run('dd', ['if=/dev/zero', `of=${v.path}`, 'bs=4096', 'count=1', 'oflag=direct', 'conv=fsync']);
  }
}

/** direct: a namespace per volume in the region with the largest free extent, as the Go driver sized it. */
async function goDirect(volumes: readonly GoVolume[], refusedSize: number): Promise<void> {
  for (const v of volumes) {
    const region = (await pmemRegions()).sort((a, b) => b.maxAvailableExtent - a.maxAvailableExtent)[0]!;
    const cache = v.parameters['persistencyModel'] === 'cache';
    // The cache volume's namespace is small (its record is what is refused), so that all fit in 2 × 4 GiB.
    const size = cache ? refusedSize : alignUp(v.asked + GiB, GiB * region.interleaveWays);
    const align = cache ? '2M' : '1G';
    const create = (a: string) =>
      runner.run('ndctl', [
        'create-namespace',
        `--region=${region.dev}`,
        '--mode=fsdax',
        '--map=dev',
        `--size=${size}`,
        `--align=${a}`,
        `--name=${v.id}`,
        `--uuid=${goUuid()}`,
      ]);
    // The Go driver asked for 1 GiB; should this kernel refuse it, 2 MiB (logged: the report says which).
    const res = await create(align).catch(async (e: unknown) => {
      if (align !== '1G') throw e;
      guestLogger('migration').warn('Go-shaped namespace: --align=1G refused, using --align=2M', {
        volumeId: v.id,
        error: String(e),
      });
      return create('2M');
    });
    v.path = `/dev/${(JSON.parse(res.stdout) as { blockdev: string }).blockdev}`;
    await runner.run('dd', ['if=/dev/zero', `of=${v.path}`, 'bs=4096', 'count=1', 'oflag=direct', 'conv=fsync']);
  }
}

/** What the Go driver reads at its start: its record files, and its devices by name. */
interface GoView {
  readonly records: Record<string, string>;
  /** lvm: `<vg>/<lv> <size> <lv uuid>`; direct: `<name> <size> <uuid> <mode> <map>` — per volume id. */
  readonly devices: Record<string, string>;
}

async function readGoView(mode: string, volumes: readonly GoVolume[]): Promise<GoView> {
  const records: Record<string, string> = {};
  for (const v of volumes) records[v.id] = await readFile(join(STATE_DIR, `${v.id}.json`), 'utf8');
  const devices: Record<string, string> = {};
  const ids = new Set(volumes.map((v) => v.id));
  if (mode === 'lvm') {
    const rows = await lvmReportRows('lvs', 'lv', 'lv_name,vg_name,lv_size,lv_uuid');
    for (const r of rows)
      if (ids.has(r['lv_name'] ?? ''))
        devices[r['lv_name']!] = `${r['vg_name']}/${r['lv_name']} ${r['lv_size']} ${r['lv_uuid']}`;
  } else {
    const out = await runner.run('ndctl', ['list', '--namespaces']);
    // One namespace is printed as an object, several as an array.
    const parsed = JSON.parse(out.stdout || '[]') as
      Record<string, string | number> | Array<Record<string, string | number>>;
    const rows = Array.isArray(parsed) ? parsed : [parsed];
    for (const n of rows) {
      const name = String(n['name'] ?? '');
      if (ids.has(name)) devices[name] = `${name} ${n['size']} ${n['uuid']} ${n['mode']} ${n['map']}`;
    }
  }
  return { records, devices };
}

/** The dd the driver ran on `path` since result `from`: whole device or first 4 KiB. */
function eraseRun(from: number, path: string): 'all' | 'head' | undefined {
  // The host runner reports the command by its resolved path (/usr/bin/dd).
  const dd = runner.results.slice(from).find((r) => /(^|\/)dd$/.test(r.command) && r.args.includes(`of=${path}`));
  if (dd === undefined) return undefined;
  return dd.args.includes('iflag=count_bytes') ? 'all' : 'head';
}

const TOOK_OVER = "took over the Go driver's volume record";
const NOT_TAKEN = "the Go driver's volume record is not taken over";

/** Boot 1: the Go driver's state of this mode, taken over by our node driver. */
export function migrationCases(suite: GuestModeSuite): void {
  const mode = suite.mode;
  boot1(`the Go driver's ${mode}-mode volumes are taken over (issue 31)`, () => {
    const keep = goVolume('pvc-go-keep-0b8e5d2c');
    const wipe = goVolume('pvc-go-wipe-7f31a9e4', { eraseafter: 'false' });
    const cache = goVolume('pvc-go-cache-52c0d7ab', { persistencyModel: 'cache', cacheSize: '2' });
    const taken = [keep, wipe];
    let g: GuestDriver | undefined;
    let lines: LogFields[] = [];
    /** What a rolled-back Go driver reads at its start, as the Go driver left it (before ours started). */
    let goView: GoView | undefined;
    const t = (): GuestDriver => {
      if (g === undefined) throw new Error('the node driver did not start on the Go state (see the beforeAll error)');
      return g;
    };

    beforeAll(async () => {
      const t0 = Date.now();
      if (mode === 'lvm') await goLvm([...taken, cache]);
      else await goDirect([...taken, cache], 256 * MiB);
      for (const v of [...taken, cache]) {
        v.sha = await goFilesystem(v.path);
        await goRecord(v, mode);
      }
      await runner.run('sync', []);
      goView = await readGoView(mode, [...taken, cache]);
      const captured = capturingLogger(`migration-${mode}`);
      lines = captured.lines;
      g = await startGuestDriver(await mkdtemp(`/tmp/migration-${mode}-`), { deviceMode: mode, log: captured.log });
      captured.log.info('guest time to build the Go state and start the node driver', { ms: Date.now() - t0 });
    }, SLOW);

    afterAll(async () => {
      // After a failed case: what is left of the taken-over volumes goes, so boot 2 finds only its own.
      for (const v of taken) if (g !== undefined) await deleteVolume(g.csi, v.id).catch(() => undefined);
      await g?.stop();
      // The refused volume, left as it was by the driver: removed here.
      if (mode === 'lvm') await runner.run('lvremove', ['-fy', cache.path]).catch(() => undefined);
      else {
        const ns = (await runner.run('ndctl', ['list', '--namespaces']).catch(() => ({ stdout: '[]' }))).stdout;
        const dev = (JSON.parse(ns || '[]') as Array<{ dev: string; name?: string }>).find((n) => n.name === cache.id);
        if (dev !== undefined)
          await runner.run('ndctl', ['destroy-namespace', '--force', dev.dev]).catch(() => undefined);
      }
      await rm(join(STATE_DIR, `${cache.id}.json`), { force: true });
    }, SLOW);

    it(
      'start-up takes over the records, reports the cache volume with the reason and keeps its device as an orphan',
      async () => {
        const took = lines.filter((l) => l['msg'] === TOOK_OVER).map((l) => l['volumeId']);
        expect(took.sort()).toEqual(taken.map((v) => v.id).sort());
        expect(lines).toContainEqual(
          expect.objectContaining({
            msg: NOT_TAKEN,
            path: join(STATE_DIR, `${cache.id}.json`),
            reason: expect.stringMatching(/cache volumes .* are not supported/),
          }),
        );
        const r = t().driver.reconciled;
        // Boot 1 runs this after the reboot case left its volumes (with records): they are there too.
        expect(r.volumes.map((v) => v.record.volumeId)).toEqual(expect.arrayContaining(taken.map((v) => v.id)));
        expect(r.droppedRecords).toEqual([]);
        expect(r.orphans.map((d) => d.volumeId)).toEqual([cache.id]);
        if (mode === 'lvm')
          expect(lines).toContainEqual(
            expect.objectContaining({ msg: 'volume group adopted: tagged as owned by this driver' }),
          );
      },
      SLOW,
    );

    it(
      'ListVolumes has them with their ids, names and device sizes; the capacity counts them as used',
      async () => {
        const all = await call(t().ctrl.controller, t().ctrl.controller.ListVolumes, {});
        const listed = { entries: all.entries.filter((e) => taken.some((v) => v.id === e.volume?.volume_id)) };
        const devices = await t().driver.deviceManager.listDevices();
        const sizeOf = (id: string): string => String(devices.find((d) => d.volumeId === id)?.size ?? -1);
        expect(
          listed.entries.map((e) => [
            e.volume?.volume_id,
            e.volume?.capacity_bytes,
            e.volume?.volume_context?.['name'],
          ]),
        ).toEqual(
          taken.map((v) => [v.id, sizeOf(v.id), v.name]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
        );
        if (mode === 'lvm') for (const v of taken) expect(sizeOf(v.id)).toBe(String(v.asked));
        const capacity = (await t().driver.status()).capacity;
        if (mode === 'lvm') {
          const vgs = (await new LvmTools(runner).vgs()).filter((vg) => MANAGED_VG.test(vg.name));
          expect(capacity.available).toBe(vgs.reduce((sum, vg) => sum + vg.free, 0));
        }
        expect(capacity.available).toBeLessThan(capacity.managed);
      },
      SLOW,
    );

    it(
      'a new volume goes beside them; they stage and publish with the data intact and DAX',
      async () => {
        const csi = t().csi;
        const fresh = await call(csi.c.controller, csi.c.controller.CreateVolume, {
          name: `pvc-new-after-go-${mode}`,
          capacity_range: { required_bytes: String(64 * MiB) },
          volume_capabilities: [
            {
              access_type: 'mount',
              mount: { fs_type: 'ext4', mount_flags: [] },
              access_mode: { mode: 'SINGLE_NODE_WRITER' },
            },
          ],
          parameters: {},
        });
        const stagedNew = join(csi.dir, 'stage-new');
        await stage(csi, fresh.volume!, 'ext4', stagedNew);
        await writeSynced(join(stagedNew, 'data'), randomBytes(4 * MiB));
        await unstage(csi, fresh.volume!.volume_id, stagedNew);
        await deleteVolume(csi, fresh.volume!.volume_id);
        for (const v of taken) {
          const paths = { staging: join(csi.dir, `stage-${v.name}`), target: join(csi.dir, `target-${v.name}`) };
          const volume = { volume_id: v.id, volume_context: GO_CONTEXT };
          await stage(csi, volume, 'ext4', paths.staging);
          await publish(csi, volume, 'ext4', paths);
          expect(sha256(await readFile(join(paths.target, 'data')))).toBe(v.sha);
          expect(await isDaxFile(join(paths.target, 'data'))).toBe(true);
          await call(csi.c.node, csi.c.node.NodeUnpublishVolume, { volume_id: v.id, target_path: paths.target });
          await unstage(csi, v.id, paths.staging);
        }
      },
      SLOW,
    );

    it(
      'a roll back finds what the Go driver left: its record files byte for byte, its devices by name with the same size and identity, the data',
      async () => {
        // docs/migration.md "Rolling back": the Go driver started again on this node reads its
        // record files and looks its devices up by name (LVs of its VG; namespaces). After our
        // driver took the volumes over, made a new one beside them, staged, published and
        // unstaged them (the cases above), all of that must be as the Go driver left it. Our owner
        // tag on the VG is the one addition (lvm); the Go driver's vgs/lvs calls do not select by tag.
        const before = goView;
        if (before === undefined) throw new Error('no view of the Go state was taken (see the beforeAll error)');
        const now = await readGoView(mode, [...taken, cache]);
        expect(now).toEqual(before);
        // Our driver keeps its own state in its journal: no record file of the Go shape is made or left by it.
        const records = (await readdir(STATE_DIR)).filter((f) => f.endsWith('.json')).sort();
        expect(records).toEqual([...taken, cache].map((v) => `${v.id}.json`).sort());
        for (const v of taken) expect(await dataSha(v.path)).toBe(v.sha);
      },
      SLOW,
    );

    it(
      'DeleteVolume erases as their eraseafter says, frees their space and removes their Go records; the cache volume is untouched',
      async () => {
        const before = (await t().driver.status()).capacity.available;
        for (const v of taken) {
          const erase = v.parameters['eraseafter'] !== 'false';
          const space: ErasedSpace | undefined = mode === 'lvm' ? await suite.csi.erasedSpace(v.id, erase) : undefined;
          const written = await space?.written();
          const from = runner.results.length;
          await deleteVolume(t().csi, v.id);
          expect(eraseRun(from, v.path)).toBe(erase ? 'all' : 'head');
          expect(await t().driver.deviceManager.findDevice(v.id)).toBeUndefined();
          if (space !== undefined && written !== undefined) {
            const left = await space.left();
            expect(isZero(left.subarray(0, 4096))).toBe(true);
            if (erase) expect(isZero(left)).toBe(true);
            else expect(left.subarray(4096).equals(written.subarray(4096))).toBe(true);
          }
        }
        const after = (await t().driver.status()).capacity.available;
        if (mode === 'lvm') expect(after - before).toBe(taken.reduce((sum, v) => sum + v.asked, 0));
        else expect(after - before).toBeGreaterThanOrEqual(2 * (2 * GiB - 64 * MiB));
        const files = await readdir(STATE_DIR);
        for (const v of taken) expect(files).not.toContain(`${v.id}.json`);
        expect(files).toContain(`${cache.id}.json`);
        expect(await dataSha(cache.path)).toBe(cache.sha);
      },
      SLOW,
    );
  });
}
