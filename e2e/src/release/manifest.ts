// release.json: every artifact of a release with its size and digest — the images, their
// signatures and SBOM attestations and the chart in the registry, and every file of the release
// directory (sha256). Verification (verify.ts) checks a registry and a directory against it.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { RegistryClient } from './registry-client.js';

export const MANIFEST_FILE = 'release.json';
export const MANIFEST_SIGNATURE = 'release.json.sig';
export const PUBLIC_KEY_FILE = 'cosign.pub';

export type RegistryArtifactKind = 'image' | 'signature' | 'attestation' | 'chart';

export interface RegistryArtifact {
  readonly kind: RegistryArtifactKind;
  readonly name: string;
  /** host[:port]/path/repository:tag */
  readonly ref: string;
  readonly digest: string;
  /** Bytes stored: the manifest and everything it references. */
  readonly size: number;
  readonly mediaType: string;
}

export interface FileArtifact {
  readonly kind: 'file';
  /** Relative to the release directory, '/'-separated. */
  readonly path: string;
  readonly digest: string;
  readonly size: number;
}

export type Artifact = RegistryArtifact | FileArtifact;

export interface ReleaseManifest {
  readonly version: string;
  readonly commit: string;
  readonly commitDate: string;
  /** Paths with uncommitted changes at release time (only with --allow-dirty). */
  readonly uncommitted: readonly string[];
  readonly dryRun: boolean;
  readonly registry: string;
  /** DRIVER_VERSION of the sources, when it differs from the release version (dry runs only). */
  readonly sourceVersion: string;
  readonly publicKey: string;
  readonly artifacts: readonly Artifact[];
  /** Seconds per step of the run that made the release. */
  readonly seconds: Readonly<Record<string, number>>;
}

export function sha256File(path: string): string {
  return `sha256:${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
}

/** Every file under `dir` except the manifest and its signature, sorted by path. */
export function fileArtifacts(dir: string): FileArtifact[] {
  const out: FileArtifact[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        const path = relative(dir, p).split(sep).join('/');
        if (path === MANIFEST_FILE || path === MANIFEST_SIGNATURE) continue;
        out.push({ kind: 'file', path, digest: sha256File(p), size: statSync(p).size });
      }
    }
  };
  walk(dir);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** host[:port] and repository path of `host[:port]/path/name[:tag]` (tag dropped). */
export function splitRef(ref: string): { host: string; repository: string; tag: string | undefined } {
  const slash = ref.indexOf('/');
  const host = ref.slice(0, slash);
  let repository = ref.slice(slash + 1);
  let tag: string | undefined;
  const colon = repository.lastIndexOf(':');
  if (colon > repository.lastIndexOf('/')) {
    tag = repository.slice(colon + 1);
    repository = repository.slice(0, colon);
  }
  return { host, repository, tag };
}

/** Read one artifact back from the registry by tag (the digest is what the tag names now). */
export async function registryArtifact(
  client: RegistryClient,
  kind: RegistryArtifactKind,
  name: string,
  ref: string,
): Promise<RegistryArtifact> {
  const { repository, tag } = splitRef(ref);
  const m = await client.manifest(repository, tag ?? 'latest');
  if (m === undefined) throw new Error(`${ref} is not in the registry`);
  return { kind, name, ref, digest: m.digest, size: m.totalSize, mediaType: m.mediaType };
}

/** The tags cosign gives the signature and the attestations of `repository@digest`. */
export function cosignTags(repository: string, digest: string): { signature: string; attestation: string } {
  const base = `${repository}:${digest.replace(':', '-')}`;
  return { signature: `${base}.sig`, attestation: `${base}.att` };
}
