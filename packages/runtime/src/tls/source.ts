// A TLS file set that follows its files: the current validated material, re-read when the files
// change. Change detection polls (fs.watch misses changes on some filesystems, and Kubernetes
// secret volumes swap a `..data` symlink instead of writing the files): stat (inode, size, mtime,
// ctime, following symlinks) of the three files, and when that changes, read them and compare a
// SHA-256 of the contents. New material replaces the old only when all three files parse and the
// key matches the certificate; otherwise the old material stays in use and a warning is logged
// (after the state has persisted for one poll, so a multi-file update in progress stays quiet).
import { stat } from 'node:fs/promises';
import { errorMessage } from '@pmem-csi/csi';
import { nullLogger, type Logger } from '../logger.js';
import {
  digestOf,
  loadTlsMaterial,
  readTlsFiles,
  validateTlsContents,
  type TlsFiles,
  type TlsMaterial,
} from './material.js';

export interface TlsFileSourceOptions {
  readonly logger?: Logger;
  /** Poll interval while the source is retained, and the staleness bound of `refreshIfStale` (default 1000 ms). */
  readonly pollIntervalMs?: number;
}

export type TlsMaterialListener = (material: TlsMaterial) => void;

/** Default interval between two looks at the files. */
export const DEFAULT_POLL_INTERVAL_MS = 1000;

async function statKeyOf(files: TlsFiles): Promise<string> {
  const parts = await Promise.all(
    [files.caFile, files.certFile, files.keyFile].map(async (path) => {
      try {
        const s = await stat(path, { bigint: true });
        return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
      } catch (e) {
        return `error:${(e as NodeJS.ErrnoException).code ?? 'unknown'}`;
      }
    }),
  );
  return parts.join('|');
}

function describe(material: TlsMaterial): Record<string, unknown> {
  const c = material.certificate;
  return {
    dnsNames: c.dnsNames,
    notAfter: c.notAfter.toISOString(),
    fingerprint256: c.fingerprint256,
    caCertificates: material.caCount,
  };
}

interface Problem {
  readonly id: string;
  readonly message: string;
  warned: boolean;
}

/** The current material of a TLS file set, re-read when the files change. */
export class TlsFileSource {
  readonly files: TlsFiles;
  readonly pollIntervalMs: number;
  /** The logger the source was opened with (credentials built on it log through it too). */
  readonly logger: Logger;
  readonly #log: Logger;
  #current: TlsMaterial;
  #generation = 1;
  #statKey: string;
  #lastCheck = Date.now();
  #problem: Problem | undefined;
  #inFlight: Promise<boolean> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #retained = 0;
  #closed = false;
  readonly #listeners = new Set<TlsMaterialListener>();

  private constructor(files: TlsFiles, material: TlsMaterial, statKey: string, options: TlsFileSourceOptions) {
    this.files = files;
    this.#current = material;
    this.#statKey = statKey;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.logger = options.logger ?? nullLogger;
    this.#log = this.logger.child({ component: 'tls-files', certFile: files.certFile });
  }

  /** Load and validate the files; throws (naming the file) when they are missing or invalid. */
  static async open(files: TlsFiles, options: TlsFileSourceOptions = {}): Promise<TlsFileSource> {
    const statKey = await statKeyOf(files); // before reading: a change while we read is seen next time
    const material = await loadTlsMaterial(files);
    const source = new TlsFileSource(files, material, statKey, options);
    source.#log.info('TLS files loaded', describe(material));
    source.#warnIfExpired(material);
    return source;
  }

  /** The material in use. */
  get current(): TlsMaterial {
    return this.#current;
  }

  /** 1 for the initial material, incremented by every swap. */
  get generation(): number {
    return this.#generation;
  }

  /** Call `listener` with each new material; returns the unsubscribe function. */
  onChange(listener: TlsMaterialListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Poll the files every `pollIntervalMs` until every retain is released (the timer does not keep the process alive). */
  retain(): () => void {
    this.#retained += 1;
    if (this.#retained === 1) this.#schedule();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#retained -= 1;
      if (this.#retained === 0) this.#stopTimer();
    };
  }

  /** Look at the files now; resolves true when new material was swapped in. Never rejects. */
  refresh(): Promise<boolean> {
    this.#inFlight ??= this.#check().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  /** `refresh()` when the last look is older than the poll interval (for on-demand users such as clients). */
  refreshIfStale(): Promise<boolean> {
    if (Date.now() - this.#lastCheck < this.pollIntervalMs) return Promise.resolve(false);
    return this.refresh();
  }

  /** Stop polling and forget listeners; `current` stays usable. */
  close(): void {
    this.#closed = true;
    this.#stopTimer();
    this.#listeners.clear();
  }

  #schedule(): void {
    if (this.#closed || this.#retained === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.refresh().finally(() => this.#schedule());
    }, this.pollIntervalMs);
    this.#timer.unref();
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #check(): Promise<boolean> {
    try {
      return await this.#checkFiles();
    } catch (e) {
      this.#report('unexpected', `TLS file check failed: ${errorMessage(e)}`);
      return false;
    }
  }

  async #checkFiles(): Promise<boolean> {
    const statKey = await statKeyOf(this.files);
    this.#lastCheck = Date.now();
    if (statKey === this.#statKey) {
      this.#warnPersistingProblem();
      return false;
    }
    let contents;
    try {
      contents = await readTlsFiles(this.files);
    } catch (e) {
      this.#report(`read:${errorMessage(e)}`, errorMessage(e)); // statKey kept: retried next time
      return false;
    }
    this.#statKey = statKey;
    const digest = digestOf(contents);
    if (digest === this.#current.digest) {
      this.#problem = undefined; // back to what we use (e.g. a bad update was reverted)
      return false;
    }
    if (this.#problem?.id === digest) return false;
    try {
      this.#swap(validateTlsContents(contents, this.files));
      return true;
    } catch (e) {
      this.#report(digest, errorMessage(e));
      return false;
    }
  }

  #swap(material: TlsMaterial): void {
    this.#current = material;
    this.#generation += 1;
    this.#problem = undefined;
    this.#log.info('TLS files changed: new material in use', { generation: this.#generation, ...describe(material) });
    this.#warnIfExpired(material);
    for (const listener of [...this.#listeners]) {
      try {
        listener(material);
      } catch (e) {
        this.#log.error('TLS material listener failed', { error: errorMessage(e) });
      }
    }
  }

  /** Remember a problem; it is logged as a warning once it is still there at the next look. */
  #report(id: string, message: string): void {
    if (this.#problem?.id === id) {
      this.#warnPersistingProblem();
      return;
    }
    this.#problem = { id, message, warned: false };
    this.#log.debug('TLS files not usable (yet), keeping the previous material', { error: message });
  }

  #warnPersistingProblem(): void {
    const p = this.#problem;
    if (p === undefined || p.warned) return;
    p.warned = true;
    this.#log.warn('TLS files not usable, keeping the previous material', {
      error: p.message,
      generation: this.#generation,
    });
  }

  #warnIfExpired(material: TlsMaterial): void {
    const { notAfter, notBefore } = material.certificate;
    const now = Date.now();
    if (now > notAfter.getTime() || now < notBefore.getTime()) {
      this.#log.warn('TLS certificate is not valid now; peers will refuse it', describe(material));
    }
  }
}
