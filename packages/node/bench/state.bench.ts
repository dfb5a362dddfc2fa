// Volume state store throughput: put+delete pairs per second, fsyncs per pair and CPU per pair, at
// concurrency 1 and 32, on a directory on disk (tmpfs would make fsync free and the figures lies).
// Run: node --conditions=@pmem-csi/source --import tsx packages/node/bench/state.bench.ts [pairs] [dir]
//      (defaults 3000 pairs per run, a new directory under /var/tmp)
// One pair is what CreateVolume + DeleteVolume do to the store: get, put, get, delete.
// Stores: the journal store (src/state/volume-store.ts, group commit) and, for the design choice,
// per-volume files whose directory fsyncs are grouped (the other design the issue named; only here).
// The first store (a file per volume, 3 fsyncs per pair) is gone from the tree: its figures,
// measured before the change on this machine, are printed from OLD_FIGURES below.
import { randomUUID } from 'node:crypto';
import { open, statfs } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { closeFd, fsyncDir, syncFd, writeAll } from '../src/state/atomic-file.js';
import type { VolumeRecord } from '../src/state/volume-record.js';
import { encodeVolumeRecordFile, validateVolumeRecord } from '../src/state/volume-record.js';
import { VolumeStateStore } from '../src/state/volume-store.js';

const PAIRS = Number(process.argv[2] ?? 3000);
const BASE = process.argv[3] ?? '/var/tmp';
const CONCURRENCY = [1, 32];
const TMPFS_MAGIC = 0x01021994;
const out = (line: string): void => void process.stdout.write(`${line}\n`);
const openFd = promisify(open);

/**
 * The first store (per-volume files: temp + fsync + rename + fsync dir per put, rm + fsync dir per
 * delete; 3 fsyncs per pair, counted with strace -c), this bench, 4 runs before the change on this
 * machine (2 cores shared with other work, load 3-12: ranges, not points).
 */
const OLD_FIGURES = [
  { concurrency: 1, pairsPerSec: '123-515', fsyncsPerPair: 3, cpuMsPerPair: '1.1-1.9' },
  { concurrency: 32, pairsPerSec: '317-587', fsyncsPerPair: 3, cpuMsPerPair: '0.60-0.84' },
];

interface BenchStore {
  init(): Promise<void>;
  get(id: string): Promise<VolumeRecord | undefined>;
  put(r: VolumeRecord): Promise<void>;
  delete(id: string): Promise<void>;
  close(): Promise<void>;
}

/** Per-volume files; each put fsyncs its temp file, the directory fsyncs of concurrent calls are shared. */
class PerFileGroupedDirSync implements BenchStore {
  readonly #dir: string;
  readonly #count: () => void;
  readonly #records = new Map<string, VolumeRecord>();
  #current: Promise<void> | undefined;
  #next: Promise<void> | undefined;

  constructor(dir: string, count: () => void) {
    this.#dir = dir;
    this.#count = count;
  }

  async init(): Promise<void> {
    await mkdir(this.#dir, { recursive: true });
  }

  async get(id: string): Promise<VolumeRecord | undefined> {
    return this.#records.get(id);
  }

  async put(record: VolumeRecord): Promise<void> {
    const valid = validateVolumeRecord(record);
    const path = join(this.#dir, `${valid.volumeId}.json`);
    const tmp = join(this.#dir, `.${valid.volumeId}.json.${randomUUID()}.tmp`);
    const fd = await openFd(tmp, 'wx', 0o600);
    try {
      await writeAll(fd, Buffer.from(encodeVolumeRecordFile(valid)), 0);
      await syncFd(fd, tmp, this.#count);
    } finally {
      await closeFd(fd);
    }
    await rename(tmp, path);
    await this.#dirSync();
    this.#records.set(valid.volumeId, valid);
  }

  async delete(id: string): Promise<void> {
    await rm(join(this.#dir, `${id}.json`), { force: true });
    await this.#dirSync();
    this.#records.delete(id);
  }

  async close(): Promise<void> {
    await this.#current;
  }

  /** Resolves after a directory fsync that started after this call. */
  #dirSync(): Promise<void> {
    if (this.#current === undefined) {
      this.#current = fsyncDir(this.#dir, this.#count).finally(() => {
        this.#current = undefined;
      });
      return this.#current;
    }
    const again = (): Promise<void> => {
      this.#next = undefined;
      return this.#dirSync();
    };
    this.#next ??= this.#current.then(again, again);
    return this.#next;
  }
}

const record = (volumeId: string): VolumeRecord => ({
  volumeId,
  name: `pvc-${volumeId}`,
  size: 8 * 1024 * 1024,
  deviceMode: 'fake',
  parameters: { eraseafter: 'true', kataContainers: 'false', usage: 'AppDirect' },
  createdAt: new Date().toISOString(),
});

interface Figures {
  readonly pairsPerSec: number;
  readonly fsyncsPerPair: number;
  readonly cpuMsPerPair: number;
}

async function drive(store: BenchStore, pairs: number, concurrency: number, prefix: string): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < pairs) {
        const id = `${prefix}-${next++}`;
        await store.get(id);
        await store.put(record(id));
        await store.get(id);
        await store.delete(id);
      }
    }),
  );
}

async function measure(make: (dir: string, count: () => void) => BenchStore, concurrency: number): Promise<Figures> {
  const dir = await mkdtemp(join(BASE, 'pmem-csi-state-bench-'));
  let fsyncs = 0;
  const store = make(join(dir, 'volumes'), () => void fsyncs++);
  try {
    await store.init();
    await drive(store, Math.min(200, PAIRS), concurrency, 'warm'); // JIT and page cache
    fsyncs = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await drive(store, PAIRS, concurrency, 'vol');
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return {
      pairsPerSec: PAIRS / seconds,
      fsyncsPerPair: fsyncs / PAIRS,
      cpuMsPerPair: (cpu.user + cpu.system) / 1000 / PAIRS,
    };
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function checkOnDisk(path: string): Promise<void> {
  const fs = await promisify(statfs)(path);
  if (fs.type === TMPFS_MAGIC) throw new Error(`${path} is tmpfs: fsync costs nothing there; give a directory on disk`);
}

const STORES: ReadonlyArray<[string, (dir: string, count: () => void) => BenchStore]> = [
  ['journal (new)', (dir, count) => new VolumeStateStore({ dir, onSync: count })],
  ['per-file, grouped dir fsync', (dir, count) => new PerFileGroupedDirSync(dir, count)],
];

interface Row {
  readonly store: string;
  readonly c: string;
  readonly rate: string;
  readonly fsyncs: string;
  readonly cpu: string;
}

const row = (r: Row): string =>
  `${r.store.padEnd(32)} ${r.c.padStart(3)} ${r.rate.padStart(10)} ${r.fsyncs.padStart(12)} ${r.cpu.padStart(12)}`;

await checkOnDisk(BASE);
out(`state store bench: ${PAIRS} pairs (get+put+get+delete) per run, directory under ${BASE}`);
out(row({ store: 'store', c: 'c', rate: 'pairs/s', fsyncs: 'fsyncs/pair', cpu: 'cpu ms/pair' }));
for (const f of OLD_FIGURES) {
  out(
    row({
      store: 'old: file per volume (recorded)',
      c: String(f.concurrency),
      rate: f.pairsPerSec,
      fsyncs: String(f.fsyncsPerPair),
      cpu: f.cpuMsPerPair,
    }),
  );
}
for (const [store, make] of STORES) {
  for (const c of CONCURRENCY) {
    const f = await measure(make, c);
    out(
      row({
        store,
        c: String(c),
        rate: f.pairsPerSec.toFixed(0),
        fsyncs: f.fsyncsPerPair.toFixed(3),
        cpu: f.cpuMsPerPair.toFixed(3),
      }),
    );
  }
}
