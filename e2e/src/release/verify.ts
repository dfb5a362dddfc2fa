// Verification of a release as a user would do it, against release.json and cosign.pub: the
// manifest's own signature, every file's size and digest, every registry artifact's digest under
// its tag, and the cosign signatures of the images (by tag: what a pull gets), their SBOM
// attestations, the SBOM files and the chart. Each check says why it failed.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { verifyBlob, verifyImage, verifySbomAttestation, type Cosign, type Verdict } from './cosign.js';
import {
  MANIFEST_FILE,
  MANIFEST_SIGNATURE,
  PUBLIC_KEY_FILE,
  sha256File,
  splitRef,
  type ReleaseManifest,
} from './manifest.js';
import type { RegistryClient } from './registry-client.js';

export interface Check {
  readonly what: string;
  readonly ok: boolean;
  readonly reason?: string;
}

const check = (what: string, v: Verdict): Check => (v.ok ? { what, ok: true } : { what, ok: false, reason: v.reason });

export function readManifest(dir: string): ReleaseManifest {
  return JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as ReleaseManifest;
}

function fileChecks(dir: string, manifest: ReleaseManifest): Check[] {
  const out: Check[] = [];
  for (const a of manifest.artifacts) {
    if (a.kind !== 'file') continue;
    const p = join(dir, a.path);
    const what = `file ${a.path}`;
    if (!existsSync(p)) out.push({ what, ok: false, reason: 'missing' });
    else if (statSync(p).size !== a.size)
      out.push({ what, ok: false, reason: `size ${statSync(p).size}, release.json says ${a.size}` });
    else {
      const d = sha256File(p);
      out.push(
        d === a.digest ? { what, ok: true } : { what, ok: false, reason: `digest ${d}, release.json says ${a.digest}` },
      );
    }
  }
  return out;
}

async function registryChecks(client: RegistryClient, manifest: ReleaseManifest): Promise<Check[]> {
  const out: Check[] = [];
  for (const a of manifest.artifacts) {
    if (a.kind === 'file') continue;
    const { repository, tag } = splitRef(a.ref);
    const what = `${a.kind} ${a.ref}`;
    const m = await client.manifest(repository, tag ?? 'latest');
    if (m === undefined) out.push({ what, ok: false, reason: 'not in the registry' });
    else if (m.digest !== a.digest)
      out.push({ what, ok: false, reason: `the tag names ${m.digest}, release.json says ${a.digest}` });
    else out.push({ what, ok: true });
  }
  return out;
}

/** Every check of the release in `dir` (release.json, cosign.pub and the files) against the registry. */
export async function verifyRelease(dir: string, cosign: Cosign, client: RegistryClient): Promise<Check[]> {
  const pub = join(dir, PUBLIC_KEY_FILE);
  const manifest = readManifest(dir);
  const checks: Check[] = [
    check(
      `signature of ${MANIFEST_FILE}`,
      await verifyBlob(cosign, pub, join(dir, MANIFEST_FILE), join(dir, MANIFEST_SIGNATURE)),
    ),
    ...fileChecks(dir, manifest),
    ...(await registryChecks(client, manifest)),
  ];
  for (const a of manifest.artifacts) {
    if (a.kind === 'image') {
      checks.push(check(`cosign signature of ${a.ref}`, await verifyImage(cosign, pub, a.ref)));
      checks.push(check(`SBOM attestation of ${a.ref}`, await verifySbomAttestation(cosign, pub, a.ref)));
    } else if (a.kind === 'chart') {
      checks.push(check(`cosign signature of ${a.ref}`, await verifyImage(cosign, pub, a.ref)));
    } else if (a.kind === 'file' && a.path.endsWith('.spdx.json')) {
      checks.push(
        check(`signature of ${a.path}`, await verifyBlob(cosign, pub, join(dir, a.path), join(dir, `${a.path}.sig`))),
      );
    }
  }
  return checks;
}
