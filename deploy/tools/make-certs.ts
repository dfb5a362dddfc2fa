// Certificates for a driver installed WITHOUT the operator (deploy/kustomize/driver/...): there is
// no operator to create them, so this prints the two TLS Secrets the pods mount, issued by a fresh
// CA with the project's own certificate code (the operator issues its certificates the same way):
//   <prefix>-registry-secrets  ca.crt, tls.crt, tls.key  identity pmem-registry (controller)
//   <prefix>-node-secrets      ca.crt, tls.crt, tls.key  identity pmem-node-controller (nodes)
// Usage: npx tsx deploy/tools/make-certs.ts [--namespace pmem-csi] [--driver-name pmem-csi.intel.com]
//                                            [--validity-days 365] | kubectl apply -f -
// The output holds private keys: pipe it to kubectl, do not store it. The CA key is not kept:
// to renew, run it again before the certificates expire (the driver reloads the mounted files;
// until the kubelet has refreshed both Secrets, nodes may fail to re-register for a minute).
// It imports the sources by path (they import nothing of ours by package name), so it runs from a
// fresh clone after `npm ci`, without a build.
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { APP_NAME, DEFAULT_DRIVER_NAME, LABEL_KEYS, SECRET_KEYS, deploymentObjectNames } from '../../packages/api/src/names.js';
import { isDriverName } from '../../packages/api/src/validate.js';
import { NODE_CONTROLLER_IDENTITY, REGISTRY_IDENTITY, createCa, createLeaf, type CertificateAndKey } from '../../packages/runtime/src/certs/index.js';

export const MAKE_CERTS_USAGE = `usage: npx tsx deploy/tools/make-certs.ts [--namespace NS] [--driver-name NAME] [--validity-days N] | kubectl apply -f -
  --namespace NS        namespace of the driver (default pmem-csi)
  --driver-name NAME    the driver (PmemCSIDeployment) name the manifests use (default ${DEFAULT_DRIVER_NAME})
  --validity-days N     validity of the CA and both certificates (default 365)`;

export interface MakeCertsOptions {
  readonly namespace: string;
  readonly driverName: string;
  readonly validityDays: number;
}

const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

interface SecretContent {
  readonly name: string;
  readonly component: 'controller' | 'node';
  readonly caPem: string;
  readonly leaf: CertificateAndKey;
}

function tlsSecret(options: MakeCertsOptions, { name, component, caPem, leaf }: SecretContent): object {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: options.namespace,
      labels: {
        [LABEL_KEYS.name]: APP_NAME,
        [LABEL_KEYS.instance]: options.driverName,
        [LABEL_KEYS.component]: component,
        [LABEL_KEYS.partOf]: APP_NAME,
        [LABEL_KEYS.managedBy]: 'make-certs',
      },
    },
    type: 'kubernetes.io/tls',
    data: { [SECRET_KEYS.caCert]: base64(caPem), [SECRET_KEYS.cert]: base64(leaf.certPem), [SECRET_KEYS.key]: base64(leaf.keyPem) },
  };
}

/** The two Secrets as one YAML stream. */
export async function makeCertSecrets(options: MakeCertsOptions, now: Date = new Date()): Promise<string> {
  const ca = await createCa({ commonName: `pmem-csi CA for ${options.driverName}`, validityDays: options.validityDays, now });
  const [registry, node] = await Promise.all([
    createLeaf({ ca, dnsName: REGISTRY_IDENTITY, validityDays: options.validityDays, now }),
    createLeaf({ ca, dnsName: NODE_CONTROLLER_IDENTITY, validityDays: options.validityDays, now }),
  ]);
  const names = deploymentObjectNames(options.driverName);
  const secrets = [
    tlsSecret(options, { name: names.registrySecret, component: 'controller', caPem: ca.certPem, leaf: registry }),
    tlsSecret(options, { name: names.nodeSecret, component: 'node', caPem: ca.certPem, leaf: node }),
  ];
  return secrets.map((s) => stringify(s, { lineWidth: 0 })).join('---\n');
}

/** Options from the command line, or the problems. */
export function parseMakeCertsArgs(argv: readonly string[]): MakeCertsOptions | { problems: string[] } {
  let values;
  try {
    values = parseArgs({
      args: [...argv],
      options: { namespace: { type: 'string', default: 'pmem-csi' }, 'driver-name': { type: 'string', default: DEFAULT_DRIVER_NAME }, 'validity-days': { type: 'string', default: '365' } },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    return { problems: [(e as Error).message] };
  }
  const validityDays = Number(values['validity-days']);
  const problems: string[] = [];
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(values.namespace)) problems.push(`--namespace: "${values.namespace}" is not a namespace name`);
  if (!isDriverName(values['driver-name'])) problems.push(`--driver-name: "${values['driver-name']}" is not a driver name (a DNS subdomain of at most 52 characters)`);
  if (!Number.isInteger(validityDays) || validityDays < 1) problems.push(`--validity-days: "${values['validity-days']}" must be a whole number of days, at least 1`);
  return problems.length > 0 ? { problems } : { namespace: values.namespace, driverName: values['driver-name'], validityDays };
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const options = parseMakeCertsArgs(process.argv.slice(2));
  if ('problems' in options) {
    process.stderr.write(`make-certs: ${options.problems.join('\n')}\n${MAKE_CERTS_USAGE}\n`);
    process.exitCode = 2;
  } else {
    process.stdout.write(await makeCertSecrets(options));
  }
}
