// The open end of the volume journal: appends a batch of frames with one write and one fdatasync,
// and rewrites the whole file atomically (compaction, migration, recovery). A failed append, or a
// failed rewrite after its rename, closes the descriptor, so the next batch must rewrite the file
// from the acknowledged records first: after a failed write or fdatasync the file may hold frames
// nobody acknowledged, and after a rename whose directory fsync failed the name may still point at
// the old file after a crash — appending there would acknowledge what a crash can take back.
import {
  closeFd,
  openForWrite,
  replaceFileAtomic,
  syncFd,
  writeAll,
  type DurabilityHooks,
  type StepHook,
} from './atomic-file.js';

export class JournalWriter {
  readonly path: string;
  readonly #hooks: DurabilityHooks;
  #fd: number | undefined;
  #size = 0;
  #lines = 0;

  constructor(path: string, hooks: DurabilityHooks) {
    this.path = path;
    this.#hooks = hooks;
  }

  /** Entry lines in the file (header excluded). */
  get lines(): number {
    return this.#lines;
  }

  /** True until resume() or rewrite() succeeded, and again after any failure. */
  get needsRewrite(): boolean {
    return this.#fd === undefined;
  }

  /** Go on appending to the existing file, which is `size` bytes long and holds `lines` entries. */
  async resume(size: number, lines: number): Promise<void> {
    await this.close();
    this.#fd = await openForWrite(this.path);
    this.#size = size;
    this.#lines = lines;
  }

  /** Append `count` entries and make them durable. */
  async append(data: Buffer, count: number): Promise<void> {
    const fd = this.#fd;
    if (fd === undefined) throw new Error(`journal ${this.path} must be rewritten before it is appended to`);
    try {
      await writeAll(fd, data, this.#size);
      await syncFd(fd, this.path, this.#hooks.onSync, true);
    } catch (e) {
      await this.close();
      throw e;
    }
    this.#size += data.length;
    this.#lines += count;
  }

  /**
   * Replace the file with `data` (header + `lines` entries), atomically and durably. When it fails
   * before the rename, the old file is still the journal and appends go on there (a full disk that
   * cannot take a compaction may still take a batch); after the rename, only a rewrite may follow.
   */
  async rewrite(data: Buffer, lines: number): Promise<void> {
    let renamed = false;
    const onStep: StepHook = (step, path) => {
      if (step === 'rename') renamed = true;
      this.#hooks.onStep?.(step, path);
    };
    let fd: number;
    try {
      fd = await replaceFileAtomic(this.path, data, { ...this.#hooks, onStep });
    } catch (e) {
      if (renamed) await this.close();
      throw e;
    }
    await this.close();
    this.#fd = fd;
    this.#size = data.length;
    this.#lines = lines;
  }

  async close(): Promise<void> {
    const fd = this.#fd;
    this.#fd = undefined;
    if (fd !== undefined) await closeFd(fd).catch(() => undefined);
  }
}
