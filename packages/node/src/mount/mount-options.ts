// Validation of the mount flags a CO passes (StorageClass mountOptions, VolumeCapability.mount_flags)
// and the final option list of a PMEM mount. Each flag must be ONE option: a comma would let a
// flag smuggle further options past our checks. Options are judged by name (the part before '=',
// case-insensitive), so a value cannot smuggle one in either: options that change what `mount`
// does (bind, remount, move, propagation), mount(8)'s userspace options (X-mount.*, x-*, helper=,
// loop and verity set-up) and filesystem options that reach other devices or the host (an external
// journal or log device, errors=panic) are refused. `dax` is the driver's decision (from the device
// and the volume's usage); a flag may override it once (e.g. dax=never), never duplicate or
// contradict it.
import { InvalidArgumentError } from '@pmem-csi/csi';

/** One mount option: letters, digits and _ . : = + @ / -, not starting with '-' (never a mount argument). */
const SINGLE_OPTION = /^[A-Za-z0-9_][A-Za-z0-9_.:=+@/-]{0,255}$/;
/** Options that turn the mount into another operation (bind, remount, move) or change propagation. */
const OPERATION_OPTIONS = new Set([
  'bind',
  'rbind',
  'remount',
  'move',
  'shared',
  'rshared',
  'private',
  'rprivate',
  'slave',
  'rslave',
  'unbindable',
  'runbindable',
  'make-shared',
  'make-rshared',
  'make-private',
  'make-rprivate',
  'make-slave',
  'make-rslave',
  'make-unbindable',
  'make-runbindable',
]);
/** mount(8) options that run helpers or set up devices: helper=/uhelper= run /sbin/mount.<type>, loop=/offset=/sizelimit= attach the source elsewhere. */
const HELPER_OPTIONS = new Set(['helper', 'uhelper', 'loop', 'offset', 'sizelimit', 'encryption']);
/** Filesystem options naming another block device (ext4 external journal, xfs log/realtime device). */
const DEVICE_OPTIONS = new Set(['journal_path', 'journal_dev', 'logdev', 'rtdev']);
/** Userspace option prefixes of libmount: X-mount.mkdir/owner/idmap/subdir, x-systemd.*, verity.* (dm-verity set-up). */
const USERSPACE_PREFIXES = ['x-', 'verity.'];
/** The spec's limit for the whole repeated field (VolumeCapability.MountVolume.mount_flags). */
export const MOUNT_FLAGS_MAX_BYTES = 4096;
const DAX = /^dax(=.*)?$/;
const DAX_ON = new Set(['dax', 'dax=always']);
const DAX_VALUES = new Set(['dax', 'dax=always', 'dax=never', 'dax=inode']);

/** Why a single option is refused (judged by its name, case-insensitive), or undefined. */
function refusedOption(flag: string): string | undefined {
  const name = flag.split('=', 1)[0]!.toLowerCase();
  if (OPERATION_OPTIONS.has(name))
    return 'the driver decides how volumes are mounted (no bind, remount, move or propagation options)';
  if (HELPER_OPTIONS.has(name) || USERSPACE_PREFIXES.some((p) => name.startsWith(p))) {
    return 'mount(8) helper and userspace options (helper=, loop, X-mount.*, x-*, verity.*) are not passed through';
  }
  if (DEVICE_OPTIONS.has(name))
    return 'options naming another device (journal_path, journal_dev, logdev, rtdev) are not allowed: a volume uses only its own device';
  if (name === 'errors' && flag.toLowerCase() === 'errors=panic')
    return "a volume's filesystem errors must not panic the node; use errors=remount-ro or errors=continue";
  return undefined;
}

/** Check every flag; returns them unchanged. @throws InvalidArgumentError naming `field[i]` */
export function validateMountFlags(flags: readonly string[], field: string): string[] {
  const bytes = flags.reduce((n, f) => n + Buffer.byteLength(f), 0);
  if (bytes > MOUNT_FLAGS_MAX_BYTES)
    throw new InvalidArgumentError(
      `${field} has ${bytes} bytes; CSI allows at most ${MOUNT_FLAGS_MAX_BYTES} for the whole field`,
    );
  flags.forEach((flag, i) => {
    const where = `${field}[${i}]`;
    if (!SINGLE_OPTION.test(flag)) {
      throw new InvalidArgumentError(
        `${where} ${JSON.stringify(flag)} is not a single mount option: one option per entry (no commas, spaces or quotes, not starting with "-"), e.g. "noatime"`,
      );
    }
    const refusal = refusedOption(flag);
    if (refusal !== undefined)
      throw new InvalidArgumentError(`${where} ${JSON.stringify(flag)} is not allowed: ${refusal}`);
    if (DAX.test(flag) && !DAX_VALUES.has(flag)) {
      throw new InvalidArgumentError(
        `${where} ${JSON.stringify(flag)} is not a dax mode; allowed: ${[...DAX_VALUES].join(', ')}`,
      );
    }
  });
  const dax = flags.filter((f) => DAX.test(f));
  if (dax.length > 1) {
    throw new InvalidArgumentError(
      `${field} sets dax more than once (${dax.join(', ')}); give at most one dax option (the driver adds "dax" itself when the device supports it)`,
    );
  }
  return [...flags];
}

/**
 * The options of a filesystem mount: the validated flags plus `dax` when the device supports it,
 * unless a flag already chose a dax mode. @throws InvalidArgumentError when a flag asks for dax on a device without it
 */
export function filesystemMountOptions(flags: readonly string[], dax: boolean, field: string): string[] {
  const valid = validateMountFlags(flags, field);
  const chosen = valid.find((f) => DAX.test(f));
  if (chosen === undefined) return dax ? ['dax', ...valid] : valid;
  if (DAX_ON.has(chosen) && !dax) {
    throw new InvalidArgumentError(
      `${field} asks for ${JSON.stringify(chosen)}, but this volume cannot use dax (emulated device or usage=FileIO); remove the option`,
    );
  }
  return valid;
}
