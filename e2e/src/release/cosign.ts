// Signatures with cosign and a key file (keyless signing needs the public Sigstore services,
// which are out of reach): images and their SBOM attestations in the registry, files of the
// release as blobs. Nothing goes to a transparency log (--tlog-upload=false), so verification
// skips it (--insecure-ignore-tlog) and rests on the public key alone.
import { join } from 'node:path';
import { ToolError } from '../cluster/processes.js';
import { runReleaseTool } from './release-tools.js';

export interface Cosign {
  readonly bin: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface KeyPair {
  readonly privateKey: string;
  readonly publicKey: string;
}

/** SPDX JSON, the predicate type cosign names spdxjson (https://spdx.dev/Document). */
export const SBOM_PREDICATE = 'spdxjson';

/** A new key pair `<dir>/cosign.key` / `cosign.pub`, encrypted with the env's COSIGN_PASSWORD. */
export async function generateKeyPair(c: Cosign, dir: string): Promise<KeyPair> {
  await runReleaseTool(c.bin, ['generate-key-pair', '--output-key-prefix', join(dir, 'cosign')], c.env, 120_000);
  return { privateKey: join(dir, 'cosign.key'), publicKey: join(dir, 'cosign.pub') };
}

/** The public key of a private key file (`cosign public-key`), written to `out`. */
export async function publicKeyOf(c: Cosign, privateKey: string, out: string): Promise<void> {
  await runReleaseTool(c.bin, ['public-key', '--key', privateKey, '--outfile', out], c.env, 60_000);
}

export async function signImage(c: Cosign, key: string, refAtDigest: string): Promise<void> {
  await runReleaseTool(c.bin, ['sign', '--key', key, '--tlog-upload=false', '--yes', refAtDigest], c.env);
}

/** Attach the SBOM as a signed in-toto attestation of the image. */
export async function attestSbom(c: Cosign, key: string, refAtDigest: string, sbom: string): Promise<void> {
  await runReleaseTool(
    c.bin,
    [
      'attest',
      '--key',
      key,
      '--type',
      SBOM_PREDICATE,
      '--predicate',
      sbom,
      '--tlog-upload=false',
      '--yes',
      refAtDigest,
    ],
    c.env,
  );
}

export async function signBlob(c: Cosign, key: string, file: string, signatureOut: string): Promise<void> {
  await runReleaseTool(
    c.bin,
    ['sign-blob', '--key', key, '--tlog-upload=false', '--yes', '--output-signature', signatureOut, file],
    c.env,
  );
}

export type Verdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** cosign's own last error line, which says why it refused. */
function reasonOf(e: unknown): string {
  if (e instanceof ToolError) {
    const lines = `${e.stderr}\n${e.stdout}`
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    return lines.find((l) => l.startsWith('Error:')) ?? lines.at(-1) ?? e.message;
  }
  return (e as Error).message;
}

/** Run a cosign verify command (no transparency log: there is none here) and say whether it accepted. */
async function verdict(c: Cosign, args: readonly string[], timeoutMs: number): Promise<Verdict> {
  try {
    await runReleaseTool(c.bin, [...args, '--insecure-ignore-tlog=true'], c.env, timeoutMs);
    return { ok: true };
  } catch (e) {
    return { ok: false, reason: reasonOf(e) };
  }
}

/** Does `ref` (a tag or a digest) carry a signature made with the key? */
export function verifyImage(c: Cosign, publicKey: string, ref: string): Promise<Verdict> {
  return verdict(c, ['verify', '--key', publicKey, ref], 120_000);
}

/** Does `ref` carry an SBOM attestation signed with the key? */
export function verifySbomAttestation(c: Cosign, publicKey: string, ref: string): Promise<Verdict> {
  return verdict(c, ['verify-attestation', '--key', publicKey, '--type', SBOM_PREDICATE, ref], 120_000);
}

export function verifyBlob(c: Cosign, publicKey: string, file: string, signature: string): Promise<Verdict> {
  return verdict(c, ['verify-blob', '--key', publicKey, '--signature', signature, file], 60_000);
}
