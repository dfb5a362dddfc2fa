// Where the local stack keeps its sockets, certificates, node state, logs and its lock: the
// --state-dir flag, else $PMEM_CSI_LOCAL_DIR, else <tmpdir>/pmem-csi-local. A relative directory
// is taken from where the user typed the command (npm runs scripts in the repository root and
// names the user's directory in INIT_CWD).
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The environment variable that names the state directory when --state-dir is not given. */
export const STATE_DIR_ENV = 'PMEM_CSI_LOCAL_DIR';

export function localStackDir(flag?: string): string {
  const chosen = flag ?? process.env[STATE_DIR_ENV];
  if (chosen === undefined || chosen === '') return join(tmpdir(), 'pmem-csi-local');
  return resolve(process.env['INIT_CWD'] ?? process.cwd(), chosen);
}
