// The listen backlog of a TCP listener as the kernel holds it: `ss` (iproute2, installed by
// tools/setup.sh) reports a listening socket's backlog as its Send-Q. For tests of listeners that
// set their own backlog (Linux caps a requested one at net.core.somaxconn).
import { execFileSync } from 'node:child_process';

/** The backlog of the socket listening on 127.0.0.1:`port`. @throws when ss is missing, slow or lists no such listener */
export function listenBacklog(port: number): number {
  let out: string;
  try {
    out = execFileSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8', timeout: 10_000 });
  } catch (err) {
    throw new Error(
      `ss (iproute2; tools/setup.sh installs it) could not list the listener on 127.0.0.1:${port}: ${(err as Error).message}`,
    );
  }
  const line = out.split('\n').find((l) => l.includes(`127.0.0.1:${port}`));
  if (line === undefined) throw new Error(`ss lists no listener on 127.0.0.1:${port}:\n${out}`);
  // State Recv-Q Send-Q Local Peer: Send-Q of a listener is its backlog.
  return Number(line.trim().split(/\s+/)[2]);
}
