// Linux capabilities of this process, read from /proc/self/status. Online ext4 growth (resize2fs on
// a mounted filesystem) needs CAP_SYS_RESOURCE; containers and sandboxes often drop it, and
// resize2fs then only says "Permission denied to resize filesystem". Knowing the capability set
// lets the driver say what is missing instead.
import { readFile } from 'node:fs/promises';

/** Capability numbers from linux/capability.h that the node needs. */
export const CAP_SYS_ADMIN = 21;
export const CAP_SYS_RESOURCE = 24;

/** Parse the effective capability mask (CapEff, hex) of a /proc/<pid>/status text. */
export function effectiveCapabilities(statusText: string): bigint | undefined {
  const hex = /^CapEff:\s*([0-9a-fA-F]+)\s*$/m.exec(statusText)?.[1];
  return hex === undefined ? undefined : BigInt(`0x${hex}`);
}

/** Whether this process holds capability `cap` (true when it cannot be determined, e.g. not Linux). */
export async function hasCapability(cap: number, statusPath = '/proc/self/status'): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(statusPath, 'utf8');
  } catch {
    return true;
  }
  const mask = effectiveCapabilities(text);
  return mask === undefined || ((mask >> BigInt(cap)) & 1n) === 1n;
}
