// Validation of the mount flags a CO passes (StorageClass mountOptions, VolumeCapability.mount_flags)
// and the final option list of a PMEM mount. Each flag must be ONE option: a comma would let a
// flag smuggle further options past our checks, and options that change what `mount` does (bind,
// remount, move) are refused. `dax` is the driver's decision (from the device and the volume's
// usage); a flag may override it once (e.g. dax=never), never duplicate or contradict it.
import { InvalidArgumentError } from '@pmem-csi/runtime';

/** One mount option: letters, digits and _ . : = + @ / -, not starting with '-' (never a mount argument). */
const SINGLE_OPTION = /^[A-Za-z0-9_][A-Za-z0-9_.:=+@/-]{0,255}$/;
const OPERATION_OPTIONS = new Set(['bind', 'rbind', 'remount', 'move', 'make-shared', 'make-private', 'make-slave', 'make-unbindable']);
const DAX = /^dax(=.*)?$/;
const DAX_ON = new Set(['dax', 'dax=always']);
const DAX_VALUES = new Set(['dax', 'dax=always', 'dax=never', 'dax=inode']);

/** Check every flag; returns them unchanged. @throws InvalidArgumentError naming `field[i]` */
export function validateMountFlags(flags: readonly string[], field: string): string[] {
  flags.forEach((flag, i) => {
    const where = `${field}[${i}]`;
    if (!SINGLE_OPTION.test(flag)) {
      throw new InvalidArgumentError(
        `${where} ${JSON.stringify(flag)} is not a single mount option: one option per entry (no commas, spaces or quotes, not starting with "-"), e.g. "noatime"`,
      );
    }
    if (OPERATION_OPTIONS.has(flag)) throw new InvalidArgumentError(`${where} ${JSON.stringify(flag)} is not allowed: the driver decides how volumes are mounted`);
    if (DAX.test(flag) && !DAX_VALUES.has(flag)) {
      throw new InvalidArgumentError(`${where} ${JSON.stringify(flag)} is not a dax mode; allowed: ${[...DAX_VALUES].join(', ')}`);
    }
  });
  const dax = flags.filter((f) => DAX.test(f));
  if (dax.length > 1) {
    throw new InvalidArgumentError(`${field} sets dax more than once (${dax.join(', ')}); give at most one dax option (the driver adds "dax" itself when the device supports it)`);
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
    throw new InvalidArgumentError(`${field} asks for ${JSON.stringify(chosen)}, but this volume cannot use dax (emulated device or usage=FileIO); remove the option`);
  }
  return valid;
}
