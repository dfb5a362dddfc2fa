// The images the manifests reference are the images the Dockerfiles build, and the driver image
// installs every host tool the runtime knows a Debian package for. (That nodeTools() of every
// device mode is covered by TOOL_PACKAGES is checked in e2e/src/deploy/images.test.ts: the
// operator may not import @pmem-csi/node.)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { isImageReference } from '@pmem-csi/api';
import { TOOL_PACKAGES } from '@pmem-csi/runtime';
import { OPERATOR_VERSION } from '../version.js';
import {
  DEFAULT_DRIVER_IMAGE,
  DEFAULT_OPERATOR_IMAGE,
  DRIVER_IMAGE_REPOSITORY,
  OPERATOR_IMAGE_REPOSITORY,
  imageReference,
} from './images.js';
import { OPERATOR_RUN_AS } from './operator-install.js';
import { HELM_CHART_DIR } from './variants.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** The packages of the one `apt-get install` line of a Dockerfile. */
function aptPackages(dockerfile: string): string[] {
  const joined = dockerfile.replace(/\\\n/g, ' ');
  const lines = joined.split('\n').filter((l) => /apt-get install/.test(l));
  if (lines.length !== 1) throw new Error(`expected one apt-get install line, found ${lines.length}`);
  const after = (lines[0] ?? '').split(/apt-get install/)[1] ?? '';
  return (after.split('&&')[0] ?? '')
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '' && !w.startsWith('-'));
}

const DOCKERFILES = [
  { file: 'deploy/images/driver.Dockerfile', repository: DRIVER_IMAGE_REPOSITORY, app: 'driver', user: '0:0' },
  {
    file: 'deploy/images/operator.Dockerfile',
    repository: OPERATOR_IMAGE_REPOSITORY,
    app: 'operator',
    user: `${OPERATOR_RUN_AS}:${OPERATOR_RUN_AS}`,
  },
] as const;

/** @pmem-csi/* packages `app` needs at run time, itself included. */
function workspaceClosure(app: string): string[] {
  const seen = new Set<string>();
  const visit = (pkg: string): void => {
    if (seen.has(pkg)) return;
    seen.add(pkg);
    const deps = Object.keys(
      (JSON.parse(read(`packages/${pkg}/package.json`)) as { dependencies?: Record<string, string> }).dependencies ??
        {},
    );
    for (const d of deps.filter((d) => d.startsWith('@pmem-csi/'))) visit(d.slice('@pmem-csi/'.length));
  };
  visit(app);
  return [...seen].sort();
}

describe('container images', () => {
  it('the driver image installs the Debian package of every host tool', () => {
    const installed = aptPackages(read('deploy/images/driver.Dockerfile'));
    const needed = [...new Set(Object.values(TOOL_PACKAGES))].sort();
    expect(needed.filter((p) => !installed.includes(p))).toEqual([]);
  });

  it('the operator image installs nothing', () => {
    expect(read('deploy/images/operator.Dockerfile')).not.toMatch(/apt-get|apk add/);
  });

  for (const d of DOCKERFILES) {
    describe(d.file, () => {
      const text = read(d.file);

      it(`builds ${d.repository}:${OPERATOR_VERSION} (title label and VERSION argument)`, () => {
        expect(text).toContain(`org.opencontainers.image.title="${d.repository}"`);
        expect(text).toMatch(new RegExp(`^ARG VERSION=${OPERATOR_VERSION.replaceAll('.', '\\.')}$`, 'm'));
      });

      it(`runs as ${d.user}`, () => {
        expect(existsSync(join(ROOT, `packages/${d.app}/src/main.ts`))).toBe(true);
        expect(text).toMatch(new RegExp(`^USER ${d.user}$`, 'm'));
      });
    });
  }

  it('the driver image runs the bundle that tools/bundle.mjs makes, checked in the build, and nothing else', () => {
    const text = read('deploy/images/driver.Dockerfile');
    const bundler = read('tools/bundle.mjs');
    // The bundle's entry is packages/driver/src/main.ts, written as pmem-csi-driver.mjs.
    expect(bundler).toContain("entryPoints: { 'pmem-csi-driver': 'packages/driver/src/main.ts' }");
    expect(bundler).toContain("join(root, 'packages/driver/dist/bundle')");
    expect(text).toContain('&& node tools/bundle.mjs');
    expect(text).toContain('&& node packages/driver/dist/bundle/pmem-csi-driver.mjs --help >/dev/null');
    expect(text).toMatch(/^COPY --from=build \/app\/packages\/driver\/dist\/bundle \.\/$/m);
    expect(text).toMatch(/^ENTRYPOINT \["node", "\/app\/pmem-csi-driver\.mjs"\]$/m);
    // Everything is inside the bundle (npm dependencies, protocol descriptors): no node_modules, no proto/.
    const copies = text.split('\n').filter((l) => l.startsWith('COPY --from=build'));
    expect(copies).toEqual(['COPY --from=build /app/packages/driver/dist/bundle ./']);
  });

  it('the operator image runs packages/operator/dist/main.js with the package.json and dist/ of every workspace package it imports', () => {
    const text = read('deploy/images/operator.Dockerfile');
    expect(text).toMatch(/^ENTRYPOINT \[.*"\/app\/packages\/operator\/dist\/main\.js"\]$/m);
    expect(text).toContain('tsc -b packages/operator/tsconfig.lib.json');
    for (const pkg of workspaceClosure('operator')) {
      expect(text).toContain(`COPY --from=build /app/packages/${pkg}/package.json ./packages/${pkg}/`);
      expect(text).toContain(`COPY --from=build /app/packages/${pkg}/dist ./packages/${pkg}/dist`);
    }
  });

  it('have valid default references of this version', () => {
    expect(DEFAULT_DRIVER_IMAGE).toBe(`pmem-csi-driver:${OPERATOR_VERSION}`);
    expect(DEFAULT_OPERATOR_IMAGE).toBe(`pmem-csi-operator:${OPERATOR_VERSION}`);
    expect(imageReference('pmem-csi-driver', { registry: 'registry.example.com/pmem/', tag: 'v1' })).toBe(
      'registry.example.com/pmem/pmem-csi-driver:v1',
    );
    for (const image of [
      DEFAULT_DRIVER_IMAGE,
      DEFAULT_OPERATOR_IMAGE,
      imageReference('x', { registry: 'localhost:5000' }),
    ])
      expect(isImageReference(image)).toBe(true);
  });

  it('the chart version, its appVersion (the default tag) and the package versions are the operator version', () => {
    const chart = parse(read(`${HELM_CHART_DIR}/Chart.yaml`)) as { version: string; appVersion: string };
    expect({ version: chart.version, appVersion: chart.appVersion }).toEqual({
      version: OPERATOR_VERSION,
      appVersion: OPERATOR_VERSION,
    });
    expect((JSON.parse(read('packages/operator/package.json')) as { version: string }).version).toBe(OPERATOR_VERSION);
    const values = parse(read(`${HELM_CHART_DIR}/values.yaml`)) as {
      operator: { image: { repository: string } };
      driver: { image: { repository: string } };
    };
    expect([values.operator.image.repository, values.driver.image.repository]).toEqual([
      OPERATOR_IMAGE_REPOSITORY,
      DRIVER_IMAGE_REPOSITORY,
    ]);
  });

  it('reads the apt-get line across continuation lines', () => {
    expect(
      aptPackages('RUN apt-get update \\\n && apt-get install -y --no-install-recommends a b \\\n c && rm -rf x\n'),
    ).toEqual(['a', 'b', 'c']);
  });
});
