// RSA key generation and certificate signing: what each costs, and how long it blocks the event
// loop. Decides how src/certs issues certificates (native async keys, native signing).
// Run: npx tsx packages/runtime/bench/keygen.bench.ts [iterations]   (default 3)
import { generateKeyPair, generateKeyPairSync, sign } from 'node:crypto';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import forge from 'node-forge';
import { createCa, createLeaf } from '../src/certs/generate.js';

const ITERATIONS = Number(process.argv[2] ?? 3);
const generateKeyPairAsync = promisify(generateKeyPair);

interface Figures {
  readonly label: string;
  readonly times: number[];
  readonly stalls: number[];
}

const out = (line: string): void => void process.stdout.write(`${line}\n`);

/** Run `op` once, measuring wall time and the longest event-loop delay seen while it ran. */
async function measure(op: () => unknown): Promise<{ ms: number; stallMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  await new Promise((r) => setTimeout(r, 5)); // let the monitor take a first sample
  const start = performance.now();
  await op();
  const ms = performance.now() - start;
  await new Promise((r) => setTimeout(r, 5)); // let the monitor record a sync op's delay
  h.disable();
  return { ms, stallMs: h.max / 1e6 };
}

async function series(label: string, op: () => unknown, iterations = ITERATIONS): Promise<Figures> {
  const times: number[] = [];
  const stalls: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const { ms, stallMs } = await measure(op);
    times.push(ms);
    stalls.push(stallMs);
  }
  const f = { label, times, stalls };
  print(f);
  return f;
}

const fmt = (n: number): string => n.toFixed(1).padStart(8);

function print(f: Figures): void {
  const mean = f.times.reduce((a, b) => a + b, 0) / f.times.length;
  out(
    `${f.label.padEnd(46)} n=${f.times.length}  mean ${fmt(mean)} ms  min ${fmt(Math.min(...f.times))} ms  max ${fmt(Math.max(...f.times))} ms  longest loop stall ${fmt(Math.max(...f.stalls))} ms`,
  );
}

const pem = {
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
} as const;
const rsaPem = (bits: number): { publicKey: string; privateKey: string } =>
  generateKeyPairSync('rsa', {
    modulusLength: bits,
    publicKeyEncoding: pem.publicKeyEncoding,
    privateKeyEncoding: pem.privateKeyEncoding,
  });
// node-forge's switch between its pure-JS code and Node's crypto (untyped in @types/node-forge).
const forgeOptions = (forge as unknown as { options: { usePureJavaScript: boolean } }).options;

function forgeCertificateToSign(publicKeyPem: string): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKeyPem);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date();
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  cert.setSubject([{ name: 'commonName', value: 'bench' }]);
  cert.setIssuer([{ name: 'commonName', value: 'bench' }]);
  return cert;
}

async function main(): Promise<void> {
  const forgeVersion = (createRequire(import.meta.url)('node-forge/package.json') as { version: string }).version;
  out(`node ${process.version}, node-forge ${forgeVersion}, ${ITERATIONS} iterations per row\n`);
  await series('baseline: idle 200 ms (noise floor of the stall)', () => new Promise((r) => setTimeout(r, 200)));
  out('Key generation');
  for (const bits of [2048, 3072] as const) {
    forgeOptions.usePureJavaScript = true;
    await series(`node-forge pure JS rsa.generateKeyPair (sync) ${bits}`, () =>
      forge.pki.rsa.generateKeyPair({ bits }),
    );
    forgeOptions.usePureJavaScript = false;
    await series(`node-forge default (-> crypto sync) ${bits}`, () => forge.pki.rsa.generateKeyPair({ bits }));
    await series(`Node crypto.generateKeyPairSync ${bits}`, () => rsaPem(bits));
    await series(`Node crypto.generateKeyPair (async) ${bits}`, () =>
      generateKeyPairAsync('rsa', { modulusLength: bits, ...pem }),
    );
  }
  out('\nCertificate signing (SHA-256, RSA PKCS#1 v1.5)');
  for (const bits of [2048, 3072] as const) {
    const keys = rsaPem(bits);
    const forgeKey = forge.pki.privateKeyFromPem(keys.privateKey);
    const cert = forgeCertificateToSign(keys.publicKey);
    await series(`node-forge cert.sign ${bits}`, () => cert.sign(forgeKey, forge.md.sha256.create()), 5);
    const tbs = Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes(), 'binary');
    await series(`Node crypto.sign ${bits}`, () => sign('sha256', tbs, keys.privateKey), 5);
  }
  out('\nsrc/certs end to end (RSA 3072 default)');
  const ca = await createCa({ commonName: 'bench CA', validityDays: 365 });
  await series('createCa 3072', () => createCa({ commonName: 'bench CA', validityDays: 365 }));
  await series('createLeaf 3072', () => createLeaf({ ca, dnsName: 'pmem-registry', validityDays: 365 }));
}

await main();
