// Where the controller replicas are: each configured registry endpoint (host:port) becomes one
// registry address per address its host resolves to. A headless Service name resolves to every
// controller pod, so the node registers with every replica (registrar-set.ts); a ClusterIP
// Service or a single host name gives one address, as before. IP literals are used as they are.
// Resolution goes through the system resolver (getaddrinfo: /etc/hosts and the search domains of
// resolv.conf, like grpc-js's own DNS resolution), behind an interface so tests inject a fake.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { parseHostPort, DeadlineExceededError } from '@pmem-csi/csi';

/** Turns a host name into all its addresses. */
export interface RegistryResolver {
  /** Every address of `host` (IPv4 and IPv6, any order); rejects when the name cannot be resolved. */
  resolve(host: string): Promise<readonly string[]>;
}

/** How long one lookup may take before it counts as failed. */
export const RESOLVE_TIMEOUT_MS = 5000;

/** The system resolver (getaddrinfo through node:dns lookup, every address). */
export const systemResolver: RegistryResolver = {
  async resolve(host: string): Promise<readonly string[]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new DeadlineExceededError(`resolving ${host} took longer than ${RESOLVE_TIMEOUT_MS} ms`)),
        RESOLVE_TIMEOUT_MS,
      );
    });
    try {
      const found = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
      return found.map((a) => a.address);
    } finally {
      clearTimeout(timer);
    }
  },
};

/** One registry address to register with: what was configured and where it led. */
export interface RegistryTarget {
  /** The configured host:port (flag --registry-endpoint). */
  readonly endpoint: string;
  /** The host name of the endpoint: the TLS target name and :authority when dialling the address. */
  readonly host: string;
  /** ip:port ([ip]:port for IPv6) to dial. */
  readonly address: string;
}

/** ip:port, IPv6 in brackets. */
export function addressOf(ip: string, port: number): string {
  return isIP(ip) === 6 ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/**
 * The targets of one configured endpoint: its host resolved to every address (an IP literal as
 * itself), sorted, without duplicates. Rejects when the name cannot be resolved.
 */
export async function resolveEndpoint(endpoint: string, resolver: RegistryResolver): Promise<RegistryTarget[]> {
  const { host, port } = parseHostPort(endpoint);
  const ips = isIP(host) === 0 ? await resolver.resolve(host) : [host];
  const addresses = [...new Set(ips.map((ip) => addressOf(ip, port)))].sort();
  return addresses.map((address) => ({ endpoint, host, address }));
}
