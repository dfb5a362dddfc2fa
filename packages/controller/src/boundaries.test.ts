// Proves the controller → node boundary of eslint.config.js: production controller code never
// imports the node package (it reaches nodes through the NodePort, nodes/node-port.ts); the
// controller's tests and test kit may use the node's test kit '@pmem-csi/node/testing' — so that
// they run on the real node — but not its production entry; the node never imports the controller,
// and the Nx project graph has no cycle. Probe files exist only in memory (lintText).
import { createProjectGraphAsync, type ProjectGraph } from '@nx/devkit';
import { ensureProjectGraph, lintProbe, WORKSPACE_ROOT } from '@pmem-csi/api/testing/lint';

const PROBE = '__controller_boundary_probe__';
const probe = lintProbe(WORKSPACE_ROOT, PROBE);

/** The lint messages ("rule: first line") for a probe at `path` (below packages/) with `code`. */
const lintProbeAt = (path: string, code: string): Promise<string[]> => probe.lint(`packages/${path}`, code);

const NODE_MAIN = "import { startNodeDriver } from '@pmem-csi/node';\nexport const probe = startNodeDriver;\n";
const NODE_KIT =
  "import { createFakeDeviceNode } from '@pmem-csi/node/testing';\nexport const probe = createFakeDeviceNode;\n";
const REFUSED =
  '@nx/enforce-module-boundaries: A project tagged with "scope:controller" can only depend on libs tagged with "scope:api", "scope:csi", "scope:shared"';

/** Project names on a dependency cycle of the graph (empty: none). */
function cycle(graph: ProjectGraph): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const visit = (name: string, path: string[]): string[] => {
    if (state.get(name) === 'done') return [];
    if (state.get(name) === 'open') return [...path.slice(path.indexOf(name)), name];
    state.set(name, 'open');
    for (const dep of graph.dependencies[name] ?? []) {
      if (graph.nodes[dep.target] === undefined) continue; // npm packages
      const found = visit(dep.target, [...path, name]);
      if (found.length > 0) return found;
    }
    state.set(name, 'done');
    return [];
  };
  for (const name of Object.keys(graph.nodes)) {
    const found = visit(name, []);
    if (found.length > 0) return found;
  }
  return [];
}

describe('controller → node boundary', () => {
  beforeAll(ensureProjectGraph, 60_000);

  it.each([
    ['controller/src/csi/', NODE_MAIN],
    ['controller/src/nodes/', NODE_KIT],
    ['controller/src/', NODE_KIT],
  ])(
    'refuses the node in production controller code (%s, %#)',
    async (dir, code) => {
      await expect(lintProbeAt(`${dir}${PROBE}.ts`, code)).resolves.toEqual([REFUSED]);
    },
    60_000,
  );

  it('lets controller tests and the controller test kit use the node test kit (controls)', async () => {
    await expect(lintProbeAt(`controller/src/csi/${PROBE}.test.ts`, NODE_KIT)).resolves.toEqual([]);
    await expect(lintProbeAt(`controller/src/testing/${PROBE}.ts`, NODE_KIT)).resolves.toEqual([]);
  }, 60_000);

  it("refuses the node's production entry in controller tests", async () => {
    await expect(lintProbeAt(`controller/src/csi/${PROBE}.test.ts`, NODE_MAIN)).resolves.toEqual([
      "no-restricted-imports: '@pmem-csi/node' import is restricted from being used. controller tests use the node only through its test kit: import from '@pmem-csi/node/testing'.",
    ]);
  }, 60_000);

  it('refuses the controller in the node, tests included', async () => {
    const code = "import { startController } from '@pmem-csi/controller';\nexport const probe = startController;\n";
    for (const file of [`node/src/csi/${PROBE}.ts`, `node/src/csi/${PROBE}.test.ts`]) {
      const messages = await lintProbeAt(file, code);
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(
        /^@nx\/enforce-module-boundaries: (Circular dependency between "node" and "controller"|A project tagged with "scope:node" can only depend on libs tagged with "scope:api", "scope:csi", "scope:shared")/,
      );
    }
  }, 60_000);

  it('finds a cycle in a graph that has one (control of the check below)', () => {
    const lib = (name: string) => ({ name, type: 'lib' as const, data: { root: `packages/${name}` } });
    const dep = (source: string, target: string) => ({ source, target, type: 'static' as const });
    const graph: ProjectGraph = {
      nodes: { a: lib('a'), b: lib('b'), c: lib('c') },
      dependencies: { a: [dep('a', 'b')], b: [dep('b', 'c')], c: [dep('c', 'a')] },
    };
    expect(cycle(graph)).toEqual(['a', 'b', 'c', 'a']);
    expect(cycle({ ...graph, dependencies: { ...graph.dependencies, c: [] } })).toEqual([]);
  });

  it('leaves the project graph without a cycle: the controller (its tests) depends on the node, never the reverse', async () => {
    process.env['NX_DAEMON'] = 'false';
    const graph = await createProjectGraphAsync({ exitOnError: false });
    expect(cycle(graph)).toEqual([]);
    expect((graph.dependencies['node'] ?? []).map((d) => d.target)).not.toContain('controller');
    expect((graph.dependencies['controller'] ?? []).map((d) => d.target)).toContain('node');
  }, 120_000);
});
