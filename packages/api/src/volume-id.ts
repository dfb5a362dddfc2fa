// Deterministic volume ids: `<first 6 characters of the name>-<sha224 hex of the name>`. The same
// CreateVolume name always yields the same id (idempotent retries, also after restarts), the id
// fits the 63-character limits of LVM and ndctl names, and it equals the id the Go driver made, so
// its volumes stay usable. Hashing is computation, not I/O, so node:crypto is fine here.
import { createHash } from 'node:crypto';

const PREFIX_LENGTH = 6;
// LVM accepts only these characters in LV names; others in the (human-readable) prefix become '_'.
// Kubernetes PV names ("pvc-<uid>") never contain any, so ids match the Go driver's.
const UNSAFE_PREFIX_CHARS = /[^A-Za-z0-9+_.-]/g;

/** Maximum length of a volume id: 6 + 1 + 56 hex digits. */
export const MAX_VOLUME_ID_LENGTH = 63;

/** The volume id for a CreateVolume name. The name must not be empty (CSI requires one). */
export function volumeIdForName(name: string): string {
  if (name.length === 0) {
    throw new RangeError('volumeIdForName: the volume name must not be empty');
  }
  const prefix = Array.from(name).slice(0, PREFIX_LENGTH).join('').replace(UNSAFE_PREFIX_CHARS, '_');
  return `${prefix}-${createHash('sha224').update(name, 'utf8').digest('hex')}`;
}
