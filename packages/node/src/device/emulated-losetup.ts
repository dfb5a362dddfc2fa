// Loop devices of the emulated device manager: listed from sysfs (/sys/block/loopN/loop/backing_file,
// no process), or from losetup's JSON where sysfs cannot tell; attach a backing file, re-read its
// size and detach through losetup (the command runner). Loop devices are a shared host resource,
// so callers match devices to files before touching them: by the backing file's identity (device
// and inode) where known, and by path otherwise. The path alone is not enough: a loop device
// attached from a container's bind mount reports its file relative to that mount once the
// container is gone (a restarted node driver saw "/emulated/<id>.img" instead of its state
// directory's path). sysfs gives the path only, so a listing takes the identity of each backing
// file by its path here, and asks losetup (whose identities come from the kernel) whenever a
// reported path names no file here: then the path may be such a foreign one.
import { readdir, readFile, stat } from 'node:fs/promises';
import { CommandFailedError, renderCommand, runJson, type CommandRunner } from '@pmem-csi/runtime';

/** One attached loop device. */
export interface LoopDevice {
  /** Device node, e.g. /dev/loop3. */
  readonly name: string;
  /** Absolute path of the backing file (as the kernel reports it), without the "(deleted)" mark. */
  readonly backFile: string;
  /** The backing file was unlinked while the device stayed attached. */
  readonly deleted: boolean;
  /** Identity of the backing file, "<major>:<minor>:<inode>" of its filesystem and inode, when losetup reports it. */
  readonly backId?: string;
}

const DELETED = ' (deleted)';
const LIST_ARGS = ['--json', '--list', '--output', 'NAME,BACK-FILE,BACK-MAJ:MIN,BACK-INO'] as const;

/** "<major>:<minor>:<inode>" of a file (Linux dev_t encoding), or undefined when it is gone. */
export async function fileIdentity(file: string): Promise<string | undefined> {
  try {
    const st = await stat(file, { bigint: true });
    const major = ((st.dev >> 8n) & 0xfffn) | ((st.dev >> 32n) & ~0xfffn);
    const minor = (st.dev & 0xffn) | ((st.dev >> 12n) & ~0xffn);
    return `${major}:${minor}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * The devices bound to `file` (identity `id` from fileIdentity): same identity when both are
 * known, else the same path; never one whose file was deleted (its inode may have been reused).
 */
export function boundTo(loops: readonly LoopDevice[], file: string, id: string | undefined): LoopDevice[] {
  return loops.filter(
    (l) => !l.deleted && (id !== undefined && l.backId !== undefined ? l.backId === id : l.backFile === file),
  );
}

function identityOf(e: { 'back-maj:min'?: unknown; 'back-ino'?: unknown }): string | undefined {
  // losetup pads this column even in JSON ("     254:0  ").
  const majMin = typeof e['back-maj:min'] === 'string' ? e['back-maj:min'].trim() : undefined;
  const ino = e['back-ino'];
  if (majMin === undefined || !/^\d+:\d+$/.test(majMin)) return undefined;
  if (!(typeof ino === 'number' && Number.isSafeInteger(ino)) && !(typeof ino === 'string' && /^\d+$/.test(ino)))
    return undefined;
  return `${majMin}:${String(ino)}`;
}

/** Decode `losetup --json --list` output; losetup prints nothing at all when no device exists. */
export function decodeLoopDevices(value: unknown): LoopDevice[] {
  if (value === undefined) return [];
  const list = (value as { loopdevices?: unknown } | null)?.loopdevices;
  if (!Array.isArray(list)) throw new TypeError('losetup JSON: "loopdevices" is not an array');
  return list.flatMap((entry: unknown) => {
    const e = entry as { name?: unknown; 'back-file'?: unknown; 'back-maj:min'?: unknown; 'back-ino'?: unknown } | null;
    if (typeof e?.name !== 'string') throw new TypeError('losetup JSON: a loop device has no "name"');
    const back = e['back-file'];
    if (typeof back !== 'string' || back === '') return [];
    const deleted = back.endsWith(DELETED);
    const backId = identityOf(e);
    return [
      {
        name: e.name,
        backFile: deleted ? back.slice(0, -DELETED.length) : back,
        deleted,
        ...(backId === undefined ? {} : { backId }),
      },
    ];
  });
}

function invalidOutput(args: readonly string[], e: unknown): CommandFailedError {
  const rendered = renderCommand('losetup', args);
  return new CommandFailedError(`${rendered}: unexpected output (${(e as Error).message})`, rendered, 0, '');
}

/** Where the list of attached loop devices comes from. */
export interface LoopTable {
  /** Loop devices attached now (all of them, or only `device`). */
  list(signal?: AbortSignal, device?: string): Promise<LoopDevice[]>;
}

/** A command runner that answers for the loop devices itself (a test double scripting losetup). */
export interface RunnerWithLoopTable extends CommandRunner {
  readonly loopTable: LoopTable;
}

/** The listing as `losetup --json --list` on `runner` reports it. */
export function losetupTable(runner: CommandRunner): LoopTable {
  return {
    list: (signal, device) => {
      const args = device === undefined ? [...LIST_ARGS] : [...LIST_ARGS, device];
      return runJson(runner, { command: 'losetup', args, options: { signal } }, (v) => {
        try {
          return decodeLoopDevices(v);
        } catch (e) {
          throw invalidOutput(args, e);
        }
      });
    },
  };
}

const LOOP_NAME = /^loop\d+$/;

/**
 * Errors of reading a loop device's sysfs backing_file that mean "not attached (any more)": no
 * "loop" directory or no backing_file in it (ENOENT), and a device detached between the directory
 * listing and the read — the kernel then answers the read with ENODEV (seen in the crash campaign,
 * where another volume's DeleteVolume detached its device meanwhile) or ENXIO.
 */
export function meansNotAttached(code: string | undefined): boolean {
  return code === 'ENOENT' || code === 'ENODEV' || code === 'ENXIO';
}

/** The backing file of a loop device as sysfs shows it, or undefined when none is attached. */
async function sysfsBackingFile(sysBlock: string, name: string, signal?: AbortSignal): Promise<string | undefined> {
  try {
    const text = await readFile(`${sysBlock}/${name}/loop/backing_file`, { encoding: 'utf8', signal });
    return text.endsWith('\n') ? text.slice(0, -1) : text;
  } catch (e) {
    if (meansNotAttached((e as NodeJS.ErrnoException).code)) return undefined;
    throw e;
  }
}

/**
 * Loop devices from sysfs: name and backing file, " (deleted)" handled as in losetup's listing
 * (decodeLoopDevices), the identity of each file taken by its path here; undefined when a reported
 * path names no file here (then only losetup can give its identity).
 */
export async function sysfsLoopDevices(
  sysBlock: string,
  signal?: AbortSignal,
  device?: string,
): Promise<LoopDevice[] | undefined> {
  let names: string[];
  if (device === undefined) {
    const all = await readdir(sysBlock).catch((e: unknown) => {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // no sysfs here
      throw e;
    });
    if (all === undefined) return undefined;
    names = all.filter((n) => LOOP_NAME.test(n));
  } else {
    const name = device.startsWith('/dev/') ? device.slice('/dev/'.length) : '';
    if (!LOOP_NAME.test(name)) return undefined; // not a plain /dev/loopN: leave it to losetup
    names = [name];
  }
  const found = await Promise.all(
    names.map(async (name): Promise<LoopDevice | undefined | 'foreign'> => {
      const back = await sysfsBackingFile(sysBlock, name, signal);
      if (back === undefined || back === '') return undefined;
      const deleted = back.endsWith(DELETED);
      const backFile = deleted ? back.slice(0, -DELETED.length) : back;
      if (deleted) return { name: `/dev/${name}`, backFile, deleted };
      const backId = await fileIdentity(backFile);
      return backId === undefined ? 'foreign' : { name: `/dev/${name}`, backFile, deleted, backId };
    }),
  );
  if (found.includes('foreign')) return undefined;
  return found.filter((l): l is LoopDevice => l !== undefined && l !== 'foreign').sort(byNumber);
}

function byNumber(a: LoopDevice, b: LoopDevice): number {
  return Number(a.name.slice('/dev/loop'.length)) - Number(b.name.slice('/dev/loop'.length));
}

/** The host's loop devices: sysfs, or losetup on `runner` when sysfs cannot tell (see sysfsLoopDevices). */
export function hostLoopTable(runner: CommandRunner, sysBlock = '/sys/block'): LoopTable {
  const losetup = losetupTable(runner);
  return {
    list: async (signal, device) =>
      (await sysfsLoopDevices(sysBlock, signal, device)) ?? (await losetup.list(signal, device)),
  };
}

function carriesLoopTable(runner: CommandRunner): runner is RunnerWithLoopTable {
  return 'loopTable' in runner;
}

/** Loop devices attached now (all of them, or only `device`): the runner's own table when it carries one, else the host's. */
export async function listLoopDevices(
  runner: CommandRunner,
  signal?: AbortSignal,
  device?: string,
): Promise<LoopDevice[]> {
  return (carriesLoopTable(runner) ? runner.loopTable : hostLoopTable(runner)).list(signal, device);
}

/** Attach `file` to a free loop device (or return the one it already has); returns the device node. */
export async function attachLoopDevice(runner: CommandRunner, file: string, signal?: AbortSignal): Promise<string> {
  const args = ['--find', '--show', '--nooverlap', file];
  const res = await runner.run('losetup', args, { signal });
  const dev = res.stdout.trim();
  if (!dev.startsWith('/dev/')) throw invalidOutput(args, new Error(`no device name in ${JSON.stringify(dev)}`));
  return dev;
}

/** Make the loop device pick up its backing file's new size. */
export async function refreshLoopDevice(runner: CommandRunner, device: string, signal?: AbortSignal): Promise<void> {
  await runner.run('losetup', ['--set-capacity', device], { signal });
}

/** Detach a loop device (the kernel defers it while someone still has the device open). */
export async function detachLoopDevice(runner: CommandRunner, device: string, signal?: AbortSignal): Promise<void> {
  await runner.run('losetup', ['--detach', device], { signal });
}
