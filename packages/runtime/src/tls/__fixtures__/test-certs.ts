// Test PKI for the certs and tls suites, generated once per test file with the certs module
// (RSA 2048 to keep key generation cheap), plus helpers to write TLS file sets.
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCa, createLeaf, type CertificateAndKey } from '../../certs/generate.js';
import { NODE_CONTROLLER_IDENTITY, REGISTRY_IDENTITY } from '../../certs/names.js';

export interface TestPki {
  /** Generation 1 (set A). */
  readonly ca1: CertificateAndKey;
  readonly registryA: CertificateAndKey;
  readonly nodeControllerA: CertificateAndKey;
  /** Generation 2 (set B, a new CA). */
  readonly ca2: CertificateAndKey;
  readonly registryB: CertificateAndKey;
  readonly nodeControllerB: CertificateAndKey;
  /** A CA nobody trusts, and a node-controller certificate it signed. */
  readonly otherCa: CertificateAndKey;
  readonly foreignNodeController: CertificateAndKey;
  /** Signed by ca1, valid for 30 days starting 400 days ago. */
  readonly expiredNodeController: CertificateAndKey;
}

const DAY = 24 * 60 * 60 * 1000;
let cached: Promise<TestPki> | undefined;

async function build(): Promise<TestPki> {
  const keyBits = 2048 as const;
  const [ca1, ca2, otherCa] = await Promise.all([
    createCa({ commonName: 'test CA 1', validityDays: 365, keyBits }),
    createCa({ commonName: 'test CA 2', validityDays: 365, keyBits }),
    createCa({ commonName: 'test other CA', validityDays: 365, keyBits }),
  ]);
  const leaf = (ca: CertificateAndKey, dnsName: string, now?: Date, validityDays = 30): Promise<CertificateAndKey> =>
    createLeaf({ ca, dnsName, validityDays, keyBits, ...(now ? { now } : {}) });
  const [registryA, nodeControllerA, registryB, nodeControllerB, foreignNodeController, expiredNodeController] = await Promise.all([
    leaf(ca1, REGISTRY_IDENTITY),
    leaf(ca1, NODE_CONTROLLER_IDENTITY),
    leaf(ca2, REGISTRY_IDENTITY),
    leaf(ca2, NODE_CONTROLLER_IDENTITY),
    leaf(otherCa, NODE_CONTROLLER_IDENTITY),
    leaf(ca1, NODE_CONTROLLER_IDENTITY, new Date(Date.now() - 400 * DAY)),
  ]);
  return { ca1, registryA, nodeControllerA, ca2, registryB, nodeControllerB, otherCa, foreignNodeController, expiredNodeController };
}

/** The suite's PKI (generated on first use). */
export function testPki(): Promise<TestPki> {
  cached ??= build();
  return cached;
}

export interface TlsFileSet {
  readonly dir: string;
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

/** A fresh temporary directory (remove it with `removeDir`). */
export function tempDir(prefix = 'pmem-tls-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}

async function atomicWrite(path: string, data: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(16).slice(2)}`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

/** Write ca.crt / tls.crt / tls.key into `dir` (each file replaced atomically). */
export async function writeTlsFiles(dir: string, caPem: string, pair: CertificateAndKey): Promise<TlsFileSet> {
  const set = { dir, caFile: join(dir, 'ca.crt'), certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
  await atomicWrite(set.caFile, caPem);
  await atomicWrite(set.certFile, pair.certPem);
  await atomicWrite(set.keyFile, pair.keyPem);
  return set;
}

/** A new directory with a TLS file set. */
export async function tlsFilesIn(caPem: string, pair: CertificateAndKey): Promise<TlsFileSet> {
  return writeTlsFiles(await tempDir(), caPem, pair);
}

/**
 * A one-method gRPC service of raw bytes ('/t.T/Ping', no protobuf), for tests of transport and
 * TLS that need a real call but no message types.
 */
export const PING_SERVICE: grpc.ServiceDefinition = {
  ping: {
    path: '/t.T/Ping',
    requestStream: false,
    responseStream: false,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  },
};

/** A client of PING_SERVICE on 127.0.0.1:`port` over mutual TLS with `cert`, trusting `caPem`, naming the registry. */
export function pingClient(caPem: string, port: number, cert: CertificateAndKey): grpc.Client {
  const Ctor = grpc.makeGenericClientConstructor(PING_SERVICE, 'T');
  const creds = grpc.credentials.createSsl(Buffer.from(caPem), Buffer.from(cert.keyPem), Buffer.from(cert.certPem));
  return new Ctor(`127.0.0.1:${port}`, creds, { 'grpc.ssl_target_name_override': REGISTRY_IDENTITY });
}

/** One Ping call with 'hi'; resolves with the answer's bytes. */
export function ping(client: grpc.Client): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      '/t.T/Ping',
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.from('hi'),
      (err, res) => (err ? reject(err) : resolve(res as Buffer)),
    ),
  );
}
