// The release into a real registry (CNCF distribution on 127.0.0.1 with TLS and a CA made here):
// `runRelease` as `npm run release -- --dry-run --registry ...` runs it, then every artifact is
// checked as a user would: digests of release.json in the registry and the files, signatures with
// the public key, helm pull of the chart by version, the kustomize base, the OLM bundle's
// validation — and refusals: a modified SBOM, another image under the released tag, a broken CSV.
// Needs root (images.sh, buildah) and the pinned tools (bash e2e/tools/bootstrap.sh); fails naming
// what is missing. Writes tmp/release-e2e.json (artifacts, sizes, digests, seconds per step).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { REPO_ROOT } from '../cluster/components.js';
import { runTool } from '../cluster/processes.js';
import { dryRunArgs, startLocalRegistry, type LocalRegistry } from './local-registry.js';
import { parseReleaseArgs } from './options.js';
import { BUNDLE_K8S_VERSION, runRelease, sourceVersion, type ReleaseResult } from './release.js';
import { resolveReleaseTools, toolEnv, type ReleaseTools } from './release-tools.js';
import { verifyBlob, type Cosign } from './cosign.js';
import { verifyRelease } from './verify.js';
import { bundleErrors, validateBundle } from './bundle-validate.js';
import { sha256File, type Artifact, type RegistryArtifact } from './manifest.js';
import { OLM_PACKAGE } from './olm.js';
import { builtImages } from '../realnode/images.js';
import { buildahPushArgs } from './push-images.js';
import { helmCaArgs } from './chart.js';

const VERSION = sourceVersion(); // the version images.sh builds in npm run e2e (cached there)

describe('release into a local TLS registry', () => {
  let work: string;
  let registry: LocalRegistry;
  let tools: ReleaseTools;
  let result: ReleaseResult;
  let cosign: Cosign;
  let out: string;
  let releaseSeconds = 0;
  const logLines: string[] = [];

  const registryArtifacts = (): RegistryArtifact[] =>
    result.manifest.artifacts.filter((a): a is RegistryArtifact => a.kind !== 'file');
  const artifact = (pred: (a: Artifact) => boolean): Artifact => {
    const a = result.manifest.artifacts.find(pred);
    if (a === undefined) throw new Error('release.json lacks an expected artifact');
    return a;
  };

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error('the release test needs root: images.sh builds with buildah and debootstrap');
    tools = resolveReleaseTools(); // throws naming each missing tool and its bootstrap command
    work = mkdtempSync(join(tmpdir(), 'pmem-csi-release-test-'));
    registry = await startLocalRegistry({ dir: join(work, 'registry'), maxLifetimeMs: 40 * 60_000 });
    out = join(work, 'out');
    const opts = parseReleaseArgs(dryRunArgs(registry, VERSION, out));
    const started = Date.now();
    result = await runRelease(opts, (msg, fields) => logLines.push(JSON.stringify({ msg, ...fields })));
    releaseSeconds = (Date.now() - started) / 1000;
    cosign = { bin: tools.cosign, env: toolEnv(join(work, 'verify'), registry.tls.caFile, '') };
    mkdirSync(join(REPO_ROOT, 'tmp'), { recursive: true });
    writeFileSync(
      join(REPO_ROOT, 'tmp', 'release-e2e.json'),
      `${JSON.stringify({ when: new Date().toISOString(), version: VERSION, releaseSeconds, seconds: result.manifest.seconds, artifacts: result.manifest.artifacts.map((a) => ({ ...a, ref: 'ref' in a ? a.ref.replace(registry.host, '127.0.0.1:<port>') : undefined })) }, null, 2)}\n`,
    );
  }, 45 * 60_000);

  afterAll(async () => {
    await registry?.stop();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it('release.json lists every artifact, and the registry and the files have them with those digests', async () => {
    const kinds = registryArtifacts().map((a) => `${a.kind} ${a.name}`);
    expect(kinds).toEqual([
      'image driver',
      'signature driver signature',
      'attestation driver SBOM attestation',
      'image operator',
      'signature operator signature',
      'attestation operator SBOM attestation',
      'chart helm chart',
      'signature helm chart signature',
    ]);
    const files = result.manifest.artifacts.filter((a) => a.kind === 'file').map((a) => a.path);
    expect(files).toEqual(
      expect.arrayContaining([
        'RELEASE-NOTES.md',
        'bundle-validation.json',
        `bundle/manifests/${OLM_PACKAGE}.clusterserviceversion.yaml`,
        'bundle/manifests/pmem-csi.intel.com_pmemcsideployments.yaml',
        'bundle/metadata/annotations.yaml',
        `chart/pmem-csi-${VERSION}.tgz`,
        'cosign.pub',
        'kustomize/crd/kustomization.yaml',
        'kustomize/driver-namespace/kustomization.yaml',
        'kustomize/operator/kustomization.yaml',
        'sbom/pmem-csi-driver.spdx.json',
        'sbom/pmem-csi-driver.spdx.json.sig',
        'sbom/pmem-csi-operator.spdx.json',
        'sbom/pmem-csi-operator.spdx.json.sig',
      ]),
    );
    for (const a of result.manifest.artifacts) {
      expect(a.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(a.size).toBeGreaterThan(0);
    }
    // The images are the ones images.sh built: their config digest is the image ID.
    const built = builtImages(['driver', 'operator'], { version: VERSION });
    for (const name of ['driver', 'operator']) {
      const a = artifact((x) => x.kind === 'image' && x.name === name) as RegistryArtifact;
      const [repo, tag] = [
        a.ref.slice(registry.host.length + 1, a.ref.lastIndexOf(':')),
        a.ref.slice(a.ref.lastIndexOf(':') + 1),
      ];
      const m = await registry.client.manifest(repo, tag);
      expect(m?.digest).toBe(a.digest);
      expect(m?.mediaType).toBe('application/vnd.oci.image.manifest.v1+json');
      expect(m?.json.config?.digest).toBe(`sha256:${built.images.get(name)?.id ?? ''}`);
    }
    const checks = await verifyRelease(out, cosign, registry.client);
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    expect(checks.length).toBe(1 + files.length + registryArtifacts().length + 2 * 2 + 1 + 2);
  });

  it('each SBOM is an SPDX document of its image, made by syft', () => {
    for (const name of ['pmem-csi-driver', 'pmem-csi-operator']) {
      const doc = JSON.parse(readFileSync(join(out, 'sbom', `${name}.spdx.json`), 'utf8')) as {
        spdxVersion: string;
        name: string;
        creationInfo: { creators: string[] };
        packages: { name: string }[];
      };
      expect(doc.spdxVersion).toMatch(/^SPDX-2\./);
      expect(doc.name).toContain(name);
      expect(doc.creationInfo.creators.join(' ')).toMatch(/syft-/);
      // Debian packages of the base and the npm packages of the bundle/node_modules.
      expect(doc.packages.length).toBeGreaterThan(20);
    }
  });

  it('helm pull gets the chart by version, with the images by digest', async () => {
    const dest = join(work, 'pulled');
    mkdirSync(dest);
    const chartRepo = `oci://${registry.host}/pmem-csi/charts/pmem-csi`;
    await runTool(
      tools.helm,
      ['pull', chartRepo, '--version', VERSION, ...helmCaArgs(registry.tls.caFile), '--destination', dest],
      {
        env: cosign.env,
        timeoutMs: 120_000,
      },
    );
    const pulled = join(dest, `pmem-csi-${VERSION}.tgz`);
    expect(sha256File(pulled)).toBe(sha256File(join(out, 'chart', `pmem-csi-${VERSION}.tgz`)));
    const tpl = (
      await runTool(tools.helm, ['template', 'pmem-csi', pulled, '-n', 'pmem-csi-operator'], { env: cosign.env })
    ).stdout;
    const driver = artifact((a) => a.kind === 'image' && a.name === 'driver') as RegistryArtifact;
    const operator = artifact((a) => a.kind === 'image' && a.name === 'operator') as RegistryArtifact;
    expect(tpl).toContain(`image: ${registry.host}/pmem-csi/pmem-csi-operator:${VERSION}@${operator.digest}`);
    expect(tpl).toContain(`--driver-image=${registry.host}/pmem-csi/pmem-csi-driver:${VERSION}@${driver.digest}`);
  });

  it('the kustomize base names both images by digest', async () => {
    const built = (await runTool(tools.kustomize, ['build', join(out, 'kustomize', 'operator')])).stdout;
    const driver = artifact((a) => a.kind === 'image' && a.name === 'driver') as RegistryArtifact;
    expect(built).toMatch(new RegExp(`image: ${registry.host}/pmem-csi/pmem-csi-operator@sha256:[0-9a-f]{64}\\n`));
    expect(built).toContain(`--driver-image=${registry.host}/pmem-csi/pmem-csi-driver@${driver.digest}`);
  });

  it('the OLM bundle passes the validators, and a broken CSV fails them with the reason', async () => {
    const ok = await validateBundle(tools.validator, join(out, 'bundle'), BUNDLE_K8S_VERSION);
    expect(bundleErrors(ok)).toEqual([]);
    expect(ok.csv).toBe(`${OLM_PACKAGE}.v${VERSION}`);
    expect(ok.validators).toEqual(expect.arrayContaining(['csv', 'crd', 'bundle', 'operatorhub-v2', 'good-practices']));
    const broken = join(work, 'broken-bundle');
    cpSync(join(out, 'bundle'), broken, { recursive: true });
    const csvFile = join(broken, 'manifests', `${OLM_PACKAGE}.clusterserviceversion.yaml`);
    const csv = parse(readFileSync(csvFile, 'utf8')) as { spec: Record<string, unknown> };
    delete csv.spec['installModes'];
    csv.spec['customresourcedefinitions'] = { owned: [] };
    writeFileSync(csvFile, stringify(csv));
    const bad = await validateBundle(tools.validator, broken, BUNDLE_K8S_VERSION);
    const errors = bundleErrors(bad).join('\n');
    expect(errors).toContain('install modes not found');
    expect(errors).toContain('is present in bundle');
    expect(errors).toContain('but not defined in CSV');
  });

  it('a modified SBOM is refused by its signature', async () => {
    const sbom = join(out, 'sbom', 'pmem-csi-driver.spdx.json');
    const copy = join(work, 'modified.spdx.json');
    const doc = JSON.parse(readFileSync(sbom, 'utf8')) as { packages: unknown[] };
    doc.packages.pop();
    writeFileSync(copy, JSON.stringify(doc));
    expect(await verifyBlob(cosign, result.publicKey, sbom, `${sbom}.sig`)).toEqual({ ok: true });
    const v = await verifyBlob(cosign, result.publicKey, copy, `${sbom}.sig`);
    expect(v.ok).toBe(false);
    expect(v.ok ? '' : v.reason).toMatch(/invalid signature/i);
  });

  // Last: it moves the driver's tag.
  it('another image under the released tag is refused, with the reason', async () => {
    const driver = artifact((a) => a.kind === 'image' && a.name === 'driver') as RegistryArtifact;
    const operator = artifact((a) => a.kind === 'image' && a.name === 'operator') as RegistryArtifact;
    const built = builtImages(['operator'], { version: VERSION });
    const certDir = join(work, 'certs.d');
    mkdirSync(certDir, { recursive: true });
    cpSync(registry.tls.caFile, join(certDir, 'ca.crt'));
    await runTool(
      'buildah',
      [...buildahPushArgs(built, certDir), built.images.get('operator')?.id ?? '', `docker://${driver.ref}`],
      { timeoutMs: 600_000 },
    );
    const checks = await verifyRelease(out, cosign, registry.client);
    const failed = checks.filter((c) => !c.ok);
    expect(failed.map((c) => c.what)).toEqual([
      `image ${driver.ref}`,
      `cosign signature of ${driver.ref}`,
      `SBOM attestation of ${driver.ref}`,
    ]);
    expect(failed[0]?.reason).toBe(`the tag names ${operator.digest}, release.json says ${driver.digest}`);
    expect(failed[1]?.reason).toMatch(/no signatures found|no matching signatures/);
    expect(failed[2]?.reason).toMatch(
      /no matching (attestations|signatures)|none of the attestations matched|no (attestations|signatures) found/i,
    );
  });

  afterAll(() => {
    // The time the release adds to a run (also in tmp/release-e2e.json).
    process.stdout.write(
      `release: ${releaseSeconds.toFixed(1)} s; steps ${JSON.stringify(result?.manifest.seconds ?? {})}\n`,
    );
  });
});
