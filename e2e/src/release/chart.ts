// The Helm chart of a release: deploy/helm/pmem-csi copied, its version and appVersion set to the
// release version, its image values pointing at the released images by digest (the chart writes
// [imageRegistry/]repository:tag, and a tag of the form <version>@sha256:... makes that a
// reference by digest that still shows the version), linted, packaged and pushed as an OCI artifact.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { REPO_ROOT } from '../cluster/components.js';
import { runReleaseTool } from './release-tools.js';

export const CHART_NAME = 'pmem-csi';
export const CHART_SOURCE = join(REPO_ROOT, 'deploy/helm', CHART_NAME);

export interface ChartImages {
  /** host[:port][/path] that both image repositories live under. */
  readonly registry: string;
  readonly driverDigest: string;
  readonly operatorDigest: string;
}

function setYaml(file: string, edits: readonly [readonly string[], string][]): void {
  const doc = parseDocument(readFileSync(file, 'utf8'));
  for (const [path, value] of edits) {
    if (!doc.hasIn(path)) throw new Error(`${file}: has no ${path.join('.')} to set`);
    doc.setIn(path, value);
  }
  writeFileSync(file, doc.toString({ lineWidth: 0 }));
}

/** Copy the chart to `<stage>/pmem-csi` with the release's version and image digests; returns the directory. */
export function stageChart(stage: string, version: string, images: ChartImages): string {
  const dir = join(stage, CHART_NAME);
  cpSync(CHART_SOURCE, dir, { recursive: true });
  setYaml(join(dir, 'Chart.yaml'), [
    [['version'], version],
    [['appVersion'], version],
  ]);
  setYaml(join(dir, 'values.yaml'), [
    [['imageRegistry'], images.registry],
    [['operator', 'image', 'tag'], `${version}@${images.operatorDigest}`],
    [['driver', 'image', 'tag'], `${version}@${images.driverDigest}`],
  ]);
  return dir;
}

export interface PackagedChart {
  readonly file: string;
  /** oci://<registry>/charts/pmem-csi */
  readonly ref: string;
  readonly digest: string;
}

/** helm's arguments that make it trust the registry's certificate authority (none without one). */
export function helmCaArgs(caFile: string | undefined): string[] {
  return caFile === undefined ? [] : ['--ca-file', caFile];
}

/** helm lint, helm package into `outDir`, helm push to oci://<registry>/charts; the digest helm reports. */
export async function packageAndPushChart(
  helm: string,
  env: Readonly<Record<string, string>>,
  opts: { chartDir: string; outDir: string; registry: string; version: string; caFile: string | undefined },
): Promise<PackagedChart> {
  await runReleaseTool(helm, ['lint', '--strict', opts.chartDir], env, 120_000);
  await runReleaseTool(helm, ['package', opts.chartDir, '--destination', opts.outDir], env, 120_000);
  const file = join(opts.outDir, `${CHART_NAME}-${opts.version}.tgz`);
  const pushed = await runReleaseTool(
    helm,
    ['push', file, `oci://${opts.registry}/charts`, ...helmCaArgs(opts.caFile)],
    env,
    300_000,
  );
  const m = /Digest:\s*(sha256:[0-9a-f]{64})/.exec(`${pushed.stdout}\n${pushed.stderr}`);
  if (m?.[1] === undefined) throw new Error(`helm push printed no digest:\n${pushed.stdout}${pushed.stderr}`);
  return { file, ref: `oci://${opts.registry}/charts/${CHART_NAME}`, digest: m[1] };
}
