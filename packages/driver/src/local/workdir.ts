// Where the local stack keeps its sockets, certificates, node state and logs.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function localStackDir(): string {
  return process.env['PMEM_CSI_LOCAL_DIR'] ?? join(tmpdir(), 'pmem-csi-local');
}
