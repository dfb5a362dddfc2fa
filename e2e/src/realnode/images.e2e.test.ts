// Smoke test of the images e2e/tools/images.sh built (it never builds them; `npm run e2e` runs
// images.sh before jest): each starts from its own entrypoint in a buildah container (chroot
// isolation, host network, nofile 1024), the driver answers --version/--help and finds every host
// tool of every device mode, the operator runs as 65532 without a shell and serves /healthz
// without a cluster, the sidecars start, every archive imports into containerd 1.6, sizes are
// printed and the driver's is at most 270 MB (DRIVER_MAX_BYTES).
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeTools } from '@pmem-csi/node/testing';
import { DEFAULT_RESIZER_IMAGE, VOLUME_DEVICE_MODES } from '@pmem-csi/api';
import { DEFAULT_DRIVER_IMAGE, DEFAULT_OPERATOR_IMAGE, OPERATOR_VERSION } from '@pmem-csi/operator';
import { Buildah, builtImages, checkImport, withContainer, type BuiltImage, type BuiltImages } from './images.js';

// 234 MB on Node.js 20; Node.js 24's binary is 28 MB larger (127 MB, was 99): 262 MB (issue 28).
const DRIVER_MAX_BYTES = 270e6;
const IMAGES = [
  'driver',
  'operator',
  'csi-provisioner',
  'csi-resizer',
  'pause',
  'registrar',
  'node-base',
  'node-runtime',
] as const;
const RUN_MS = 60_000;

let built: BuiltImages | Error;
beforeAll(() => {
  try {
    built = builtImages(IMAGES);
  } catch (e) {
    built = e instanceof Error ? e : new Error(String(e));
  }
});

/** The built images; a test fails with images.sh's message (naming the command) when they are not. */
function images(): BuiltImages {
  if (built instanceof Error) throw built;
  return built;
}
function image(name: (typeof IMAGES)[number]): BuiltImage {
  const i = images().images.get(name);
  if (i === undefined) throw new Error(`images.sh --print-env printed nothing for ${name}`);
  return i;
}
const buildah = (): Buildah => new Buildah(images().storage);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a !== null ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

async function get(url: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return { status: r.status, body: (await r.text()).trim() };
  } catch {
    return undefined;
  }
}

describe('images built by e2e/tools/images.sh', () => {
  it('are all built; sizes (uncompressed) printed; the driver image is at most 270 MB', () => {
    const rows = IMAGES.map((n) => image(n)).map(
      (i) => `${i.name.padEnd(16)} ${i.ref.padEnd(55)} ${(i.sizeBytes / 1e6).toFixed(0).padStart(4)} MB`,
    );
    console.log(`image sizes (uncompressed):\n${rows.join('\n')}`);
    // Built from earlier inputs (someone edited the checkout since): tested all the same, and said.
    if (images().warnings.length > 0) console.warn(images().warnings.join('\n'));
    for (const n of IMAGES) expect(image(n).sizeBytes).toBeGreaterThan(1e6);
    expect(image('driver').sizeBytes).toBeLessThanOrEqual(DRIVER_MAX_BYTES);
    // The chart's and the operator's default names resolve to these images.
    expect(image('driver').ref).toBe(DEFAULT_DRIVER_IMAGE);
    expect(image('operator').ref).toBe(DEFAULT_OPERATOR_IMAGE);
    // The operator's default resizer is the version e2e/tools pins (the real node runs that one).
    expect(image('csi-resizer').ref).toBe(DEFAULT_RESIZER_IMAGE);
  });

  it('export archives that containerd 1.6 imports under the names kubelet asks for', () => {
    const exported = IMAGES.filter((n) => image(n).archive !== undefined);
    expect(exported).toEqual(['driver', 'operator', 'csi-provisioner', 'csi-resizer', 'pause', 'registrar']);
    const r = checkImport(exported);
    expect({ status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toContain(
      `imported docker.io/library/pmem-csi-driver:${OPERATOR_VERSION} from ${image('driver').archive}`,
    );
    expect(r.stdout).toContain(`imported docker.io/library/pmem-csi-operator:${OPERATOR_VERSION} from`);
    expect(r.stdout).toContain(`imported ${image('csi-provisioner').ref} from`);
    expect(r.stdout).toContain(`imported ${image('csi-resizer').ref} from`);
  });
});

describe('driver image', () => {
  it('answers --version with the version it is tagged with', async () => {
    await withContainer(buildah(), image('driver').ref, (c) => {
      expect(c.config.entrypoint).toEqual(['node', '/app/pmem-csi-driver.mjs']);
      expect(c.config.labels['org.opencontainers.image.version']).toBe(OPERATOR_VERSION);
      const r = c.exec(['--version'], RUN_MS);
      expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
        status: 0,
        stdout: `pmem-csi-driver ${OPERATOR_VERSION}\n`,
        stderr: '',
      });
    });
  });

  it('answers --help with the usage of both modes and the subcommands', async () => {
    await withContainer(buildah(), image('driver').ref, (c) => {
      const r = c.exec(['--help'], RUN_MS);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^usage: pmem-csi-driver --mode controller\|node/);
      expect(r.stdout).toContain('pmem-csi-driver check-tools [MODE ...]');
    });
  });

  it('finds every host tool of every device mode where the node driver looks for it', async () => {
    await withContainer(buildah(), image('driver').ref, (c) => {
      for (const mode of VOLUME_DEVICE_MODES) {
        const r = c.exec(['check-tools', mode], RUN_MS);
        expect({ mode, status: r.status, stderr: r.stderr }).toEqual({ mode, status: 0, stderr: '' });
        const lines = r.stdout.trim().split('\n');
        const found = lines.filter((l) => l.startsWith(`${mode} `)).map((l) => l.split(' '));
        expect(found.map((f) => f[1])).toEqual(nodeTools(mode));
        for (const f of found) expect(f[2]).toMatch(/^\/(usr\/)?s?bin\/[^/]+$/);
        expect(lines.at(-1)).toBe(
          `check-tools: ${nodeTools(mode).length} tool lookups in device modes ${mode}: all found`,
        );
      }
    });
  });

  it("keeps neither the build machine's CA bundle and npm config nor node_modules", async () => {
    await withContainer(buildah(), image('driver').ref, (c) => {
      for (const p of ['etc/ssl/certs/ca-certificates.crt', 'usr/local/etc/npmrc', 'root/.npm', 'app/node_modules'])
        expect({ p, exists: c.exists(p) }).toEqual({ p, exists: false });
      expect(c.exists('app/pmem-csi-driver.mjs')).toBe(true);
    });
  });
});

describe('operator image', () => {
  it('runs node as uid 65532, with no shell and no package manager', async () => {
    await withContainer(buildah(), image('operator').ref, (c) => {
      expect(c.config.user).toBe('65532:65532');
      expect(c.config.entrypoint).toEqual(['/nodejs/bin/node', '/app/packages/operator/dist/main.js']);
      for (const p of [
        'bin/sh',
        'usr/bin/sh',
        'bin/bash',
        'usr/bin/apt-get',
        'usr/bin/dpkg',
        'etc/ssl/certs/ca-certificates.crt',
      ]) {
        // Debian's CA bundle (from the ca-certificates package) is expected; a shell or apt is not.
        expect({ p, exists: c.exists(p) }).toEqual({ p, exists: p.endsWith('.crt') });
      }
      const r = c.buildah.run(
        [
          'run',
          '--isolation',
          'chroot',
          '--network',
          'host',
          c.name,
          '--',
          '/nodejs/bin/node',
          '-e',
          'console.log(process.getuid(), process.version)',
        ],
        RUN_MS,
      );
      expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 0, stdout: `65532 ${process.version}\n` });
    });
  });

  it('answers --version with the version it is tagged with, and --help with it as the default of --operator-version', async () => {
    const ref = image('operator').ref;
    const tag = ref.slice(ref.lastIndexOf(':') + 1);
    expect(tag).toBe(OPERATOR_VERSION);
    await withContainer(buildah(), ref, (c) => {
      const v = c.exec(['--version'], RUN_MS);
      expect({ status: v.status, output: (v.stdout + v.stderr).trim() }).toEqual({
        status: 0,
        output: `pmem-csi-operator ${tag}`,
      });
      const h = c.exec(['--help'], RUN_MS);
      expect(h.status).toBe(0);
      // commander wraps the description: the default follows the option after any line breaks.
      expect(h.stdout + h.stderr).toMatch(
        new RegExp(`--operator-version <VERSION>[^]*?\\(default: "${tag.replaceAll('.', '\\.')}"\\)`),
      );
    });
  });

  it('starts without a reachable cluster: /healthz 200, /readyz 503 until its informers sync', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pmem-csi-op-smoke-'));
    const kubeconfig = join(dir, 'kubeconfig');
    // Port 1 on 127.0.0.1: connection refused, at once.
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: c',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:2", insecure-skip-tls-verify: true}}]',
        'users: [{name: u, user: {token: "not-a-secret"}}]',
        'contexts: [{name: c, context: {cluster: c, user: u}}]',
        '',
      ].join('\n'),
    );
    const port = await freePort();
    try {
      await withContainer(buildah(), image('operator').ref, async (c) => {
        const op = c.start(
          [
            `--kubeconfig=/run/kubeconfig`,
            `--metrics-address=127.0.0.1:${port}`,
            `--driver-image=${image('driver').ref}`,
          ],
          [`${kubeconfig}:/run/kubeconfig:ro`],
        );
        try {
          let health: { status: number; body: string } | undefined;
          const deadline = Date.now() + 60_000;
          while (Date.now() < deadline && op.child.exitCode === null) {
            health = await get(`http://127.0.0.1:${port}/healthz`);
            if (health !== undefined) break;
            await new Promise((r) => setTimeout(r, 250));
          }
          if (health === undefined)
            throw new Error(
              `the operator served no /healthz on 127.0.0.1:${port} within 60 s (exit ${op.child.exitCode}); output:\n${op.output}`,
            );
          expect(health).toEqual({ status: 200, body: 'ok' });
          expect(await get(`http://127.0.0.1:${port}/readyz`)).toEqual({ status: 503, body: 'informers not synced' });
          expect(op.output).toContain(`msg=starting component=pmem-csi-operator version=${OPERATOR_VERSION}`);
          expect(op.output).toContain('connect ECONNREFUSED 127.0.0.1:2');
        } finally {
          const code = await op.stop();
          // SIGTERM is the operator's clean stop.
          expect({ code, output: code === 0 ? '' : op.output }).toEqual({ code: 0, output: '' });
        }
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sidecar images (FROM scratch)', () => {
  it('csi-provisioner starts from its entrypoint and reports the version it is tagged with', async () => {
    const tag = image('csi-provisioner').ref.split(':').at(-1) ?? '';
    await withContainer(buildah(), image('csi-provisioner').ref, (c) => {
      expect(c.config.entrypoint).toEqual(['/csi-provisioner']);
      // No cluster: it logs its version, then fails on the missing kubeconfig.
      const r = c.exec(['--csi-address=/nonexistent.sock', '--kubeconfig=/nonexistent'], RUN_MS);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`version="${tag}"`);
      expect(c.exists('bin/sh')).toBe(false);
    });
  });

  it('csi-resizer starts from its entrypoint and reports the version it is tagged with', async () => {
    const tag = image('csi-resizer').ref.split(':').at(-1) ?? '';
    await withContainer(buildah(), image('csi-resizer').ref, (c) => {
      expect(c.config.entrypoint).toEqual(['/csi-resizer']);
      const r = c.exec(['--version'], RUN_MS);
      expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 0, stdout: `/csi-resizer ${tag}\n` });
      expect(c.exists('bin/sh')).toBe(false);
    });
  });

  for (const [name, binary] of [
    ['pause', 'pmem-csi-pause'],
    ['registrar', 'pmem-csi-registrar'],
  ] as const) {
    it(`${name} starts ${binary} from its entrypoint (--version)`, async () => {
      const tag = image(name).ref.split(':').at(-1) ?? '';
      await withContainer(buildah(), image(name).ref, (c) => {
        expect(c.config.entrypoint).toEqual([`/${binary}`]);
        const r = c.exec(['--version'], RUN_MS);
        expect({ status: r.status, output: (r.stdout + r.stderr).includes(tag) }).toEqual({ status: 0, output: true });
      });
    });
  }
});
