// The driver and operator images of a release: built (or taken from the cache) by
// e2e/tools/images.sh exactly as the real-node tier builds them, then pushed from its private
// buildah storage to the registry as OCI manifests. The push holds images.sh's build lock, so a
// concurrent images.sh cannot prune the storage under it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '../cluster/components.js';
import { runTool } from '../cluster/processes.js';
import { builtImages, IMAGES_COMMAND, type BuiltImages } from '../realnode/images.js';

export const RELEASE_IMAGES = [
  { name: 'driver', repository: 'pmem-csi-driver' },
  { name: 'operator', repository: 'pmem-csi-operator' },
] as const;

export interface PushedImage {
  readonly name: string;
  /** host[:port]/path/repository */
  readonly repository: string;
  /** repository:version */
  readonly ref: string;
  readonly digest: string;
  /** ID of the image (its config digest) in images.sh's storage. */
  readonly imageId: string;
}

/** Build (or find cached) the release images of `version`; fails with images.sh's output, or when the tree changed under the build (unless allowStale). */
/** `buildah` arguments up to the image: push as OCI from images.sh's store, trusting `certDir`'s CA when given. */
export function buildahPushArgs(built: BuiltImages, certDir?: string): string[] {
  return [
    '--root',
    built.storage.root,
    '--runroot',
    built.storage.runroot,
    '--storage-driver',
    'overlay',
    'push',
    '--format',
    'oci',
    ...(certDir === undefined ? [] : ['--cert-dir', certDir]),
  ];
}

export async function buildReleaseImages(version: string, allowStale = false): Promise<BuiltImages> {
  const names = RELEASE_IMAGES.map((i) => i.name);
  try {
    await runTool('bash', [join(REPO_ROOT, 'e2e/tools/images.sh'), '--version', version, ...names], {
      cwd: REPO_ROOT,
      timeoutMs: 45 * 60_000,
    });
  } catch (e) {
    throw new Error(`${IMAGES_COMMAND} --version ${version} ${names.join(' ')} failed: ${(e as Error).message}`);
  }
  const built = builtImages(names, { version });
  const stale = [...built.images.values()].filter((i) => i.stale).map((i) => i.name);
  // Only a dirty tree (--allow-dirty, tests) can change under the build; a release refuses that.
  if (stale.length > 0 && !allowStale)
    throw new Error(
      `images built from other inputs than the work tree's: ${stale.join(', ')} (edited during the build?)`,
    );
  return built;
}

/** An image of images.sh's storage pushed to a registry. */
export interface PushedBuiltImage {
  readonly name: string;
  /** host[:port]/path/repository:tag it was pushed to */
  readonly target: string;
  readonly digest: string;
  /** ID of the image (its config digest) in images.sh's storage. */
  readonly imageId: string;
}

/**
 * Push images of images.sh's storage, each by its image ID to its `target` (repository:tag); the
 * digest is what the registry stored. One `flock` on images.sh's build lock covers every push, so no
 * images.sh builds (and prunes) meanwhile; an ID gone before the lock was taken means another
 * images.sh (of another checkout sharing the cache) rebuilt the tag: the error says so.
 */
export async function pushBuiltImages(
  built: BuiltImages,
  targets: ReadonlyArray<{ readonly name: string; readonly target: string }>,
  opts: { certDir: string | undefined; work: string },
): Promise<PushedBuiltImage[]> {
  const lock = join(dirname(built.storage.root), '.build.lock');
  mkdirSync(opts.work, { recursive: true });
  const plan = targets.map(({ name, target }) => {
    const image = built.images.get(name);
    if (image === undefined) throw new Error(`images.sh printed no ${name} image`);
    const digestFile = join(opts.work, `${name}.digest`);
    writeFileSync(digestFile, '');
    return { name, image, target, digestFile };
  });
  // bash -c 'buildah "$@" push ... A && buildah ... push ... B' with every value as an argument.
  const buildah = ['buildah', ...buildahPushArgs(built, opts.certDir)];
  const script = plan
    .map(
      (_, i) =>
        `"\${@:1:${buildah.length}}" --digestfile "\${@:${buildah.length + 1 + 3 * i}:1}" "\${@:${buildah.length + 2 + 3 * i}:1}" "\${@:${buildah.length + 3 + 3 * i}:1}"`,
    )
    .join(' && ');
  const args = plan.flatMap((p) => [p.digestFile, p.image.id, `docker://${p.target}`]);
  try {
    await runTool('flock', [lock, 'bash', '-c', script, 'push', ...buildah, ...args], {
      timeoutMs: 20 * 60_000,
      env: { CONTAINERS_REGISTRIES_CONF: built.storage.registriesConf },
    });
  } catch (e) {
    const msg = (e as Error).message;
    if (msg.includes('image not known'))
      throw new Error(`${msg}
(the image ID images.sh printed is gone: another images.sh sharing the cache rebuilt the tag; run the push again)`);
    throw e;
  }
  return plan.map(({ name, image, target, digestFile }) => {
    const digest = readFileSync(digestFile, 'utf8').trim();
    if (!/^sha256:[0-9a-f]{64}$/.test(digest))
      throw new Error(`buildah push of ${name} wrote no digest (got "${digest}")`);
    return { name, target, digest, imageId: image.id };
  });
}

/** Push each release image to `<registry>/<repository>:<version>` (pushBuiltImages). */
export async function pushReleaseImages(
  built: BuiltImages,
  opts: { registry: string; version: string; certDir: string | undefined; work: string },
): Promise<PushedImage[]> {
  const repositories = new Map<string, string>(RELEASE_IMAGES.map((i) => [i.name, `${opts.registry}/${i.repository}`]));
  const pushed = await pushBuiltImages(
    built,
    RELEASE_IMAGES.map(({ name }) => ({ name, target: `${repositories.get(name) ?? ''}:${opts.version}` })),
    opts,
  );
  return pushed.map(({ name, target, digest, imageId }) => ({
    name,
    repository: repositories.get(name) ?? '',
    ref: target,
    digest,
    imageId,
  }));
}
