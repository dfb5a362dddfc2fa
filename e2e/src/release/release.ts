// `npm run release`: everything a release holds, from a clean tree — the driver and operator
// images (images.sh's builds) pushed as OCI manifests, an SPDX SBOM of each (syft), cosign
// signatures of each image, its SBOM attestation and the chart, the Helm chart packaged and pushed
// as an OCI artifact, kustomize bases and an OLM bundle pinned to the image digests (the bundle
// checked by the operator framework's validators), release notes, and release.json listing every
// artifact with its size and digest (itself signed).
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../cluster/components.js';
import { runReleaseTool, resolveReleaseTools, toolEnv, type ReleaseTools } from './release-tools.js';
import { startLocalRegistry, type LocalRegistry } from './local-registry.js';
import { RegistryClient } from './registry-client.js';
import { commitsSince, createTag, dirtyPaths, headCommit, previousTag, tagExists } from './git.js';
import { buildReleaseImages, pushReleaseImages, type PushedImage } from './push-images.js';
import { attestSbom, generateKeyPair, publicKeyOf, signBlob, signImage, type Cosign } from './cosign.js';
import { packageAndPushChart, stageChart, type PackagedChart } from './chart.js';
import { checkOperatorBase, writeKustomizeBases } from './kustomize-bases.js';
import { writeBundle } from './olm.js';
import { bundleErrors, validateBundle } from './bundle-validate.js';
import { releaseNotes } from './notes.js';
import {
  cosignTags,
  fileArtifacts,
  MANIFEST_FILE,
  MANIFEST_SIGNATURE,
  PUBLIC_KEY_FILE,
  registryArtifact,
  sha256File,
  type Artifact,
  type ReleaseManifest,
} from './manifest.js';
import type { ReleaseOptions } from './options.js';

/** Kubernetes version the bundle's deprecated-API checks use (the tiers' control plane). */
export const BUNDLE_K8S_VERSION = '1.33';

export type ReleaseLog = (msg: string, fields?: Readonly<Record<string, string | number | boolean>>) => void;

export interface ReleaseResult {
  readonly out: string;
  readonly manifest: ReleaseManifest;
  readonly publicKey: string;
  readonly seconds: number;
}

export class ReleaseRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReleaseRefusedError';
  }
}

/** DRIVER_VERSION of packages/csi/src/version.ts. */
export function sourceVersion(): string {
  const text = readFileSync(join(REPO_ROOT, 'packages/csi/src/version.ts'), 'utf8');
  const m = /export const DRIVER_VERSION = '([^']+)'/.exec(text);
  if (m?.[1] === undefined) throw new Error('packages/csi/src/version.ts has no DRIVER_VERSION line');
  return m[1];
}

/** Refusals before anything is built: a dirty tree (naming the files), a version the sources do not have, an existing tag. */
export async function preflight(opts: ReleaseOptions, repo = REPO_ROOT): Promise<{ dirty: string[]; source: string }> {
  const dirty = await dirtyPaths(repo);
  if (dirty.length > 0 && !opts.allowDirty) {
    const shown = dirty.slice(0, 20).join(', ');
    throw new ReleaseRefusedError(
      `the work tree has uncommitted changes (${dirty.length}): ${shown}${dirty.length > 20 ? ', …' : ''}; commit or remove them (--allow-dirty is for tests)`,
    );
  }
  const source = sourceVersion();
  if (!opts.dryRun) {
    if (source !== opts.version)
      throw new ReleaseRefusedError(
        `--version ${opts.version}: the sources say ${source} (packages/csi/src/version.ts); bump them first`,
      );
    if (await tagExists(`v${opts.version}`))
      throw new ReleaseRefusedError(`--version ${opts.version}: tag v${opts.version} exists already`);
  }
  if (existsSync(opts.out) && readdirSync(opts.out).length > 0)
    throw new ReleaseRefusedError(`--out ${opts.out}: exists and is not empty`);
  if (opts.cosignKey !== undefined && (process.env['COSIGN_PASSWORD'] ?? '') === '')
    throw new ReleaseRefusedError('COSIGN_PASSWORD: must be set (the password of --cosign-key)');
  return { dirty: opts.allowDirty ? dirty : [], source };
}

class Timer {
  readonly seconds: Record<string, number> = {};
  #start = Date.now();
  lap(step: string): void {
    const now = Date.now();
    this.seconds[step] = Math.round((now - this.#start) / 100) / 10;
    this.#start = now;
  }
}

interface Context {
  readonly opts: ReleaseOptions;
  readonly tools: ReleaseTools;
  readonly env: Readonly<Record<string, string>>;
  readonly cosign: Cosign;
  readonly registry: string;
  readonly caFile: string | undefined;
  readonly client: RegistryClient;
  readonly work: string;
  readonly key: string;
  readonly log: ReleaseLog;
}

async function sbomsAndSignatures(ctx: Context, images: readonly PushedImage[]): Promise<void> {
  mkdirSync(join(ctx.opts.out, 'sbom'), { recursive: true });
  for (const image of images) {
    const byDigest = `${image.repository}@${image.digest}`;
    const repo = image.repository.split('/').pop() ?? image.name;
    const sbom = join(ctx.opts.out, 'sbom', `${repo}.spdx.json`);
    await runReleaseTool(
      ctx.tools.syft,
      ['scan', `registry:${byDigest}`, '-o', `spdx-json=${sbom}`, '-q'],
      ctx.env,
      15 * 60_000,
    );
    ctx.log('sbom written', { image: image.name, file: sbom });
    await signImage(ctx.cosign, ctx.key, byDigest);
    await attestSbom(ctx.cosign, ctx.key, byDigest, sbom);
    await signBlob(ctx.cosign, ctx.key, sbom, `${sbom}.sig`);
    ctx.log('image signed, SBOM attested', { image: image.name, digest: image.digest });
  }
}

async function chartStep(ctx: Context, images: readonly PushedImage[]): Promise<PackagedChart> {
  const digestOf = (name: string): string => images.find((i) => i.name === name)?.digest ?? '';
  const dir = stageChart(join(ctx.work, 'chart'), ctx.opts.version, {
    registry: ctx.registry,
    driverDigest: digestOf('driver'),
    operatorDigest: digestOf('operator'),
  });
  mkdirSync(join(ctx.opts.out, 'chart'), { recursive: true });
  const chart = await packageAndPushChart(ctx.tools.helm, ctx.env, {
    chartDir: dir,
    outDir: join(ctx.opts.out, 'chart'),
    registry: ctx.registry,
    version: ctx.opts.version,
    caFile: ctx.caFile,
  });
  await signImage(ctx.cosign, ctx.key, `${chart.ref.replace(/^oci:\/\//, '')}@${chart.digest}`);
  ctx.log('chart pushed and signed', { ref: chart.ref, digest: chart.digest });
  return chart;
}

async function manifestsStep(ctx: Context, images: readonly PushedImage[]): Promise<void> {
  const find = (name: string): PushedImage => {
    const i = images.find((x) => x.name === name);
    if (i === undefined) throw new Error(`no ${name} image pushed`);
    return i;
  };
  const driver = find('driver');
  const operator = find('operator');
  const pinned = {
    driver: { repository: driver.repository, digest: driver.digest },
    operator: { repository: operator.repository, digest: operator.digest },
  };
  const kdir = join(ctx.opts.out, 'kustomize');
  writeKustomizeBases(kdir, ctx.opts.version, pinned);
  await checkOperatorBase(ctx.tools.kustomize, ctx.env, kdir, pinned);
  const commit = await headCommit();
  const prev = await previousTag(ctx.opts.version);
  const bundleDir = join(ctx.opts.out, 'bundle');
  writeBundle(bundleDir, {
    version: ctx.opts.version,
    operatorImage: `${operator.repository}@${operator.digest}`,
    driverImage: `${driver.repository}@${driver.digest}`,
    createdAt: commit.date,
    ...(prev === undefined ? {} : { replaces: prev.slice(1) }),
  });
  const report = await validateBundle(ctx.tools.validator, bundleDir, BUNDLE_K8S_VERSION);
  writeFileSync(join(ctx.opts.out, 'bundle-validation.json'), `${JSON.stringify(report, null, 2)}\n`);
  if (report.errors > 0) throw new Error(`the OLM bundle fails validation:\n  ${bundleErrors(report).join('\n  ')}`);
  ctx.log('bundle valid', {
    errors: report.errors,
    warnings: report.warnings,
    validators: report.validators.join(','),
  });
}

async function registryArtifacts(
  ctx: Context,
  images: readonly PushedImage[],
  chart: PackagedChart,
): Promise<Artifact[]> {
  const out: Artifact[] = [];
  for (const image of images) {
    out.push(await registryArtifact(ctx.client, 'image', image.name, image.ref));
    const tags = cosignTags(image.repository, image.digest);
    out.push(await registryArtifact(ctx.client, 'signature', `${image.name} signature`, tags.signature));
    out.push(await registryArtifact(ctx.client, 'attestation', `${image.name} SBOM attestation`, tags.attestation));
  }
  const chartRepo = chart.ref.replace(/^oci:\/\//, '');
  out.push(await registryArtifact(ctx.client, 'chart', 'helm chart', `${chartRepo}:${ctx.opts.version}`));
  out.push(
    await registryArtifact(
      ctx.client,
      'signature',
      'helm chart signature',
      cosignTags(chartRepo, chart.digest).signature,
    ),
  );
  return out;
}

async function keys(ctx: Omit<Context, 'key'>): Promise<string> {
  const pub = join(ctx.opts.out, PUBLIC_KEY_FILE);
  if (ctx.opts.cosignKey !== undefined) {
    await publicKeyOf(ctx.cosign, ctx.opts.cosignKey, pub);
    return ctx.opts.cosignKey;
  }
  const pair = await generateKeyPair(ctx.cosign, ctx.work);
  copyFileSync(pair.publicKey, pub);
  return pair.privateKey;
}

/** Make the release; see RELEASE_USAGE (options.ts) for what the options mean. */
export async function runRelease(opts: ReleaseOptions, log: ReleaseLog): Promise<ReleaseResult> {
  const started = Date.now();
  const t = new Timer();
  const { dirty, source } = await preflight(opts);
  const tools = resolveReleaseTools();
  t.lap('preflight');
  mkdirSync(opts.out, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'pmem-csi-release-'));
  let local: LocalRegistry | undefined;
  try {
    if (opts.registry === undefined) {
      local = await startLocalRegistry({ dir: join(work, 'registry') });
      log('own registry started (dry run)', { host: local.host });
    }
    const registry = opts.registry ?? `${local?.host ?? ''}/pmem-csi`;
    const caFile = opts.registryCa ?? local?.tls.caFile;
    const password =
      opts.cosignKey === undefined ? randomBytes(24).toString('base64url') : (process.env['COSIGN_PASSWORD'] ?? '');
    const env = toolEnv(work, caFile, password);
    const base = {
      opts,
      tools,
      env,
      cosign: { bin: tools.cosign, env },
      registry,
      caFile,
      client: new RegistryClient(registry.split('/')[0] ?? registry, caFile ?? '/etc/ssl/certs/ca-certificates.crt'),
      work,
      log,
    };
    const ctx: Context = { ...base, key: await keys(base) };
    t.lap('registry-and-keys');
    const built = await buildReleaseImages(opts.version, opts.allowDirty);
    t.lap('images-build');
    let certDir: string | undefined;
    if (caFile !== undefined) {
      certDir = join(work, 'certs.d');
      mkdirSync(certDir, { recursive: true });
      copyFileSync(caFile, join(certDir, 'ca.crt'));
    }
    const images = await pushReleaseImages(built, {
      registry,
      version: opts.version,
      certDir,
      work: join(work, 'push'),
    });
    log('images pushed', { driver: images[0]?.digest ?? '', operator: images[1]?.digest ?? '' });
    t.lap('images-push');
    await sbomsAndSignatures(ctx, images);
    t.lap('sbom-and-sign');
    const chart = await chartStep(ctx, images);
    t.lap('chart');
    await manifestsStep(ctx, images);
    t.lap('kustomize-and-bundle');
    const prev = await previousTag(opts.version);
    const commits = await commitsSince(prev);
    writeFileSync(
      join(opts.out, 'RELEASE-NOTES.md'),
      releaseNotes({
        version: opts.version,
        previousTag: prev,
        commits,
        images: images.map((i) => ({ name: i.name, ref: i.ref, digest: i.digest })),
        chart: { ref: chart.ref, version: opts.version, digest: chart.digest },
      }),
    );
    const artifacts = [...(await registryArtifacts(ctx, images, chart)), ...fileArtifacts(opts.out)];
    t.lap('notes-and-manifest');
    const commit = await headCommit();
    const manifest: ReleaseManifest = {
      version: opts.version,
      commit: commit.sha,
      commitDate: commit.date,
      uncommitted: dirty,
      dryRun: opts.dryRun,
      registry,
      sourceVersion: source,
      publicKey: PUBLIC_KEY_FILE,
      artifacts,
      seconds: { ...t.seconds, total: Math.round((Date.now() - started) / 100) / 10 },
    };
    const manifestFile = join(opts.out, MANIFEST_FILE);
    writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    await signBlob(ctx.cosign, ctx.key, manifestFile, join(opts.out, MANIFEST_SIGNATURE));
    if (!opts.dryRun) {
      await createTag(`v${opts.version}`, `PMEM-CSI ${opts.version}\n\n${MANIFEST_FILE} ${sha256File(manifestFile)}`);
      log('tagged', { tag: `v${opts.version}` });
    }
    return {
      out: opts.out,
      manifest,
      publicKey: join(opts.out, PUBLIC_KEY_FILE),
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await local?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
