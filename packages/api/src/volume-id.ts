// Deterministic volume ids: `<first 6 characters of the name>-<sha224 hex of the name>`. The same
// CreateVolume name always yields the same id (idempotent retries, also after restarts), the id
// fits the 63-character limits of LVM and ndctl names, and it equals the id the Go driver made, so
// its volumes stay usable. Hashing is computation, not I/O, so node:crypto is fine here.
//
// The one rule for ids (volumeIdProblem) is shared by the controller and the nodes: every id the
// controller makes from a name it accepts is one each device mode and the node's state accept
// (LVM names and reserved words, 63-byte ndctl namespace names, record file names). A name whose
// id would break it is refused up front (volumeNameProblem), naming the field and what is allowed.
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
  const prefix = prefixOf(name).replace(UNSAFE_PREFIX_CHARS, '_');
  return `${prefix}-${createHash('sha224').update(name, 'utf8').digest('hex')}`;
}

/** CSI's general string limit, which CreateVolumeRequest.name does not override. */
export const MAX_VOLUME_NAME_BYTES = 128;

/** Characters CSI bans in CreateVolume names: control characters other than common whitespace. */
const BANNED_NAME_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u;

/** Strings LVM reserves inside LV names (lvm(8), VALID NAMES), and the prefixes it reserves. */
export const LVM_RESERVED_SUBSTRINGS = [
  '_cdata',
  '_cmeta',
  '_corig',
  '_iorig',
  '_mimage',
  '_mlog',
  '_pmspare',
  '_rimage',
  '_rmeta',
  '_tdata',
  '_tmeta',
  '_vdata',
  '_vorigin',
  '_wcorig',
] as const;
const LVM_RESERVED_PREFIXES = ['pvmove', 'snapshot'] as const;

/**
 * The shape of every id a node accepts: up to 6 characters of the LVM set (A-Z a-z 0-9 + _ . -)
 * not starting with '.' or '-' (record files, LVM), '-', 56 lower-case hex digits (≤ 63 bytes).
 */
const VOLUME_ID = /^[A-Za-z0-9+_][A-Za-z0-9+_.-]{0,5}-[0-9a-f]{56}$/;

/** Why a node would refuse `id` as the id of a volume it creates; undefined when every device mode accepts it. */
export function volumeIdProblem(id: string): string | undefined {
  if (!VOLUME_ID.test(id)) {
    return `volume id ${JSON.stringify(id)} does not have the form <1-6 of A-Z a-z 0-9 + _ . -, not starting with "." or "-">-<56 hex digits>`;
  }
  const reserved =
    LVM_RESERVED_SUBSTRINGS.find((r) => id.includes(r)) ?? LVM_RESERVED_PREFIXES.find((p) => id.startsWith(p));
  if (reserved !== undefined)
    return `volume id ${JSON.stringify(id)} contains ${JSON.stringify(reserved)}, which LVM reserves in volume names`;
  return undefined;
}

const NAME_RULE =
  `allowed: 1 to ${MAX_VOLUME_NAME_BYTES} bytes (UTF-8) without control characters; the first 6 characters begin the volume id, ` +
  `so they must not start with "." or "-", must not be characters outside the Basic Multilingual Plane (such as emoji) and must not hold the words LVM reserves ` +
  `(${[...LVM_RESERVED_PREFIXES.map((p) => `${p}...`), ...LVM_RESERVED_SUBSTRINGS].join(', ')}); the names external-provisioner makes by default (pvc-<uid>) always qualify`;

/** The id prefix's characters: the first 6 code points of the name. */
function prefixOf(name: string): string {
  return Array.from(name).slice(0, PREFIX_LENGTH).join('');
}

/** Why `name` yields no usable id, in words about the name (undefined: it does). */
function nameIdProblem(name: string): string | undefined {
  if (/[\u{10000}-\u{10FFFF}]/u.test(prefixOf(name)))
    return 'has a character outside the Basic Multilingual Plane among its first 6 characters';
  if (/^[.-]/.test(name)) return 'starts with "." or "-"';
  const problem = volumeIdProblem(volumeIdForName(name));
  return problem === undefined ? undefined : `yields a volume id no node accepts (${problem})`;
}

/**
 * Why CreateVolume must refuse `name` (named `field` in the message): too long, banned characters,
 * or an id no node would accept. Undefined when the name is fine.
 */
export function volumeNameProblem(name: string, field = 'name'): string | undefined {
  if (name === '') return `${field} is required`;
  const bytes = new TextEncoder().encode(name).length;
  if (bytes > MAX_VOLUME_NAME_BYTES) return `${field} is ${bytes} bytes long; ${NAME_RULE}`;
  if (BANNED_NAME_CHARS.test(name))
    return `${field} ${JSON.stringify(name)} contains a control character; ${NAME_RULE}`;
  const problem = nameIdProblem(name);
  return problem === undefined ? undefined : `${field} ${JSON.stringify(name)} ${problem}; ${NAME_RULE}`;
}
