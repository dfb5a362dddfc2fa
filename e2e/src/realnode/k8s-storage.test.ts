// The k8s-storage harness on its own: the test-driver definitions (every key one the suite knows,
// every capability what the product does), the focus and skip expressions, the JUnit reader on a
// report in e2e.test's format, the RESULTS.md table and e2e.test's command line. A definition the
// suite silently misreads, or a reader that counted a failure as a pass, would make the tier lie.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { DEFAULT_DRIVER_NAME, parseVolumeParameters, topologyKey } from '@pmem-csi/api';
import { CONTROLLER_CAPABILITIES } from '@pmem-csi/controller';
import { MiB } from '@pmem-csi/csi';
import { REPO_ROOT } from '../cluster/components.js';
import { parseStorageReport, summaryLine, countOutcomes, failureSummary } from './k8s-storage-junit.js';
import {
  CURATED,
  DEFINITIONS,
  focusExpression,
  fullSpecText,
  skipExpression,
  skipFor,
  storageSkips,
  type Definition,
} from './k8s-storage-specs.js';
import {
  countedSpecs,
  dealShards,
  e2eTestArgs,
  MAX_ARG_BYTES,
  mergeReports,
  resultsMarkdown,
  runModeFrom,
  shardsFrom,
} from './k8s-storage.js';

// The driverDefinition fields and capability names of Kubernetes v1.33.1
// (test/e2e/storage/external/external.go, test/e2e/storage/framework/testdriver.go).
const TOP_KEYS = [
  'DriverInfo',
  'StorageClass',
  'VolumeAttributesClass',
  'SnapshotClass',
  'InlineVolumes',
  'ClientNodeName',
  'Timeouts',
];
const DRIVER_INFO_KEYS = [
  'Name',
  'InTreePluginName',
  'TestTags',
  'MaxFileSize',
  'SupportedSizeRange',
  'SupportedFsType',
  'SupportedMountOption',
  'RequiredMountOption',
  'Capabilities',
  'RequiredAccessModes',
  'TopologyKeys',
  'NumAllowedTopologies',
  'StressTestOptions',
  'VolumeSnapshotStressTestOptions',
  'PerformanceTestOptions',
];
const CAPABILITIES = [
  'persistence',
  'block',
  'fsGroup',
  'volumeMountGroup',
  'exec',
  'snapshotDataSource',
  'groupSnapshot',
  'pvcDataSource',
  'multipods',
  'RWX',
  'controllerExpansion',
  'nodeExpansion',
  'offlineExpansion',
  'onlineExpansion',
  'volumeLimits',
  'singleNodeVolume',
  'topology',
  'capacity',
  'FSResizeFromSourceNotSupported',
  'readWriteOncePod',
  'multiplePVsSameID',
  'capReadOnlyMany',
];

interface DriverDefinition {
  StorageClass: { FromFile: string };
  DriverInfo: {
    Name: string;
    TestTags?: string[];
    SupportedFsType: Record<string, object>;
    SupportedSizeRange: { Min: string };
    TopologyKeys: string[];
    Capabilities: Record<string, boolean>;
  };
  InlineVolumes?: Array<{ Attributes: Record<string, string>; Shared: boolean; ReadOnly: boolean }>;
}
interface StorageClass {
  kind: string;
  provisioner: string;
  volumeBindingMode: string;
  allowVolumeExpansion: boolean;
  parameters: Record<string, string>;
}

const readYaml = <T>(rel: string): T => parse(readFileSync(join(REPO_ROOT, rel), 'utf8')) as T;
const definition = (d: Definition): DriverDefinition => readYaml<DriverDefinition>(DEFINITIONS[d].file);
const quantity = (q: string): number => {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  if (m === null) throw new Error(`not a Mi/Gi quantity: ${q}`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 * MiB : MiB);
};
/** The product's emulated-mode manifest (generated from the operator's builders). */
const deployObjects = (): Array<{ kind: string; metadata: { name: string }; spec: Record<string, unknown> }> =>
  parseAllDocuments(readFileSync(join(REPO_ROOT, 'deploy/kubernetes/emulated-testing/pmem-csi.yaml'), 'utf8')).map(
    (d) => d.toJS() as { kind: string; metadata: { name: string }; spec: Record<string, unknown> },
  );

describe('test-driver definitions (e2e/k8s-storage)', () => {
  it.each(Object.keys(DEFINITIONS) as Definition[])('%s: every key is one e2e.test v1.33.1 reads', (d) => {
    const def = definition(d) as unknown as Record<string, Record<string, unknown>>;
    expect(Object.keys(def).filter((k) => !TOP_KEYS.includes(k))).toEqual([]);
    expect(Object.keys(def['DriverInfo'] ?? {}).filter((k) => !DRIVER_INFO_KEYS.includes(k))).toEqual([]);
    expect(Object.keys(definition(d).DriverInfo.Capabilities).filter((c) => !CAPABILITIES.includes(c))).toEqual([]);
  });

  it('both definitions are the driver by its name and topology key, with the same capabilities', () => {
    const [ext4, xfs] = [definition('ext4'), definition('xfs')];
    for (const def of [ext4, xfs]) {
      expect(def.DriverInfo.Name).toBe(DEFAULT_DRIVER_NAME);
      expect(def.DriverInfo.TopologyKeys).toEqual([topologyKey(DEFAULT_DRIVER_NAME)]);
    }
    expect(xfs.DriverInfo.Capabilities).toEqual(ext4.DriverInfo.Capabilities);
    // Every capability the suite knows is stated, none left to its default.
    expect(Object.keys(ext4.DriverInfo.Capabilities).sort()).toEqual([...CAPABILITIES].sort());
    // The tag that tells the xfs definition's specs apart is the one the harness parses.
    expect(xfs.DriverInfo.TestTags).toEqual([DEFINITIONS.xfs.tag]);
    expect(ext4.DriverInfo.TestTags).toBeUndefined();
  });

  it('the capabilities are what the controller advertises and what the operator deploys', () => {
    const caps = definition('ext4').DriverInfo.Capabilities;
    const ctrl: readonly string[] = CONTROLLER_CAPABILITIES;
    expect({
      controllerExpansion: caps['controllerExpansion'],
      capacity: caps['capacity'],
      snapshotDataSource: caps['snapshotDataSource'],
      pvcDataSource: caps['pvcDataSource'],
      readWriteOncePod: caps['readWriteOncePod'],
    }).toEqual({
      controllerExpansion: ctrl.includes('EXPAND_VOLUME'),
      capacity: ctrl.includes('GET_CAPACITY'),
      snapshotDataSource: ctrl.includes('CREATE_DELETE_SNAPSHOT'),
      pvcDataSource: ctrl.includes('CLONE_VOLUME'),
      readWriteOncePod: ctrl.includes('SINGLE_NODE_MULTI_WRITER'),
    });
    const objects = deployObjects();
    const csiDriver = objects.find((o) => o.kind === 'CSIDriver')?.spec ?? {};
    // capacity: the scheduler uses CSIStorageCapacity only with storageCapacity true.
    expect(csiDriver['storageCapacity']).toBe(caps['capacity']);
    // Inline volumes are declared, so the CSIDriver must allow the Ephemeral lifecycle.
    expect(csiDriver['volumeLifecycleModes']).toEqual(['Persistent', 'Ephemeral']);
    // fsGroup with the default fsGroupPolicy (ReadWriteOnceWithFSType) needs the StorageClasses' fstype (below).
    expect(csiDriver['fsGroupPolicy']).toBeUndefined();
    // controllerExpansion: external-resizer runs beside the controller.
    const controller = objects.find((o) => o.kind === 'Deployment');
    const containers = (
      (controller?.spec['template'] as { spec: { containers: Array<{ name: string; image: string }> } } | undefined)
        ?.spec.containers ?? []
    ).map((c) => c.image.replace(/:.*$/, ''));
    expect(containers.some((i) => i.endsWith('/csi-resizer'))).toBe(caps['controllerExpansion']);
  });

  it.each([
    ['ext4', 'ext4'],
    ['xfs', 'xfs'],
  ] as const)(
    "%s: its StorageClass is the driver's, late binding, expandable, fstype %s, and its parameters parse",
    (d, fs) => {
      const def = definition(d);
      const sc = readYaml<StorageClass>(def.StorageClass.FromFile);
      expect([sc.kind, sc.provisioner, sc.volumeBindingMode, sc.allowVolumeExpansion]).toEqual([
        'StorageClass',
        DEFAULT_DRIVER_NAME,
        'WaitForFirstConsumer',
        true,
      ]);
      expect(sc.parameters['csi.storage.k8s.io/fstype']).toBe(fs);
      expect(parseVolumeParameters(sc.parameters, 'createVolume').ok).toBe(true);
      // "" is the StorageClass's own filesystem; the only other one is that filesystem again.
      expect(Object.keys(def.DriverInfo.SupportedFsType).sort()).toEqual(['', fs]);
    },
  );

  it('size ranges: 16 MiB (4 units of the emulated mode) for ext4, 300 MiB (mkfs.xfs minimum) for xfs', () => {
    expect(quantity(definition('ext4').DriverInfo.SupportedSizeRange.Min)).toBe(16 * MiB);
    expect(quantity(definition('xfs').DriverInfo.SupportedSizeRange.Min)).toBe(300 * MiB);
  });

  it('the inline volume attributes are valid ephemeral parameters, and only the ext4 definition has them', () => {
    const inline = definition('ext4').InlineVolumes ?? [];
    expect(inline.length).toBeGreaterThan(0);
    for (const v of inline) {
      const p = parseVolumeParameters(v.Attributes, 'ephemeral');
      expect(p.ok && p.value.size).toBe(16 * MiB);
      expect([v.Shared, v.ReadOnly]).toEqual([false, false]);
    }
    expect(definition('xfs').InlineVolumes).toBeUndefined();
  });
});

describe('focus and skip expressions', () => {
  const ext4Spec =
    '[Testpattern: Dynamic PV (default fs)(allowExpansion)] volume-expand should resize volume when PVC is edited while pod is using it';
  const ext4 = fullSpecText({ definition: 'ext4', spec: ext4Spec });
  const xfs = fullSpecText({ definition: 'xfs', spec: ext4Spec });

  it('the spec texts of the two definitions differ by the xfs tag', () => {
    expect(ext4).toBe(`External Storage [Driver: pmem-csi.intel.com] ${ext4Spec}`);
    expect(xfs).toBe(`External Storage [Driver: pmem-csi.intel.com] [StorageClass: xfs] ${ext4Spec}`);
  });

  it('the curated focus matches each curated spec of its own definition only', () => {
    const re = new RegExp(focusExpression(CURATED));
    for (const c of CURATED) {
      expect([c.spec, re.test(fullSpecText(c))]).toEqual([c.spec, true]);
      const other: Definition = c.definition === 'ext4' ? 'xfs' : 'ext4';
      if (!CURATED.some((k) => k.definition === other && k.spec === c.spec))
        expect([c.spec, other, re.test(fullSpecText({ definition: other, spec: c.spec }))]).toEqual([
          c.spec,
          other,
          false,
        ]);
    }
    // Not a longer spec that starts the same.
    expect(re.test(`${fullSpecText(CURATED[0] ?? { definition: 'ext4', spec: '' })} (more)`)).toBe(false);
    expect(new Set(CURATED.map((c) => fullSpecText(c))).size).toBe(CURATED.length);
  });

  it('the full focus matches both definitions and no other driver', () => {
    const re = new RegExp(focusExpression('all'));
    expect([re.test(ext4), re.test(xfs)]).toEqual([true, true]);
    expect(
      re.test(
        'External Storage [Driver: hostpath.csi.k8s.io] [Testpattern: Dynamic PV (default fs)] volumes should store data',
      ),
    ).toBe(false);
  });

  it('without CAP_SYS_RESOURCE, online ext4 growth is skipped with the reason; xfs and offline ext4 growth are not', () => {
    const without = storageSkips({ sysResource: false });
    const re = new RegExp(skipExpression(without) ?? 'never');
    expect([re.test(ext4), re.test(xfs)]).toEqual([true, false]);
    expect(skipFor(without, ext4)?.why).toMatch(/CAP_SYS_RESOURCE/);
    expect(skipFor(without, xfs)).toBeUndefined();
    const withCap = storageSkips({ sysResource: true });
    expect(new RegExp(skipExpression(withCap) ?? 'never').test(ext4)).toBe(false);
    // Block expansion needs no filesystem growth: never skipped.
    const block = fullSpecText({
      definition: 'ext4',
      spec: '[Testpattern: Dynamic PV (block volmode)(allowExpansion)] volume-expand Verify if offline PVC expansion works',
    });
    expect(re.test(block)).toBe(false);
    // Offline growth needs no capability (the node grows ext4 at NodeStageVolume): never skipped.
    const offline = fullSpecText({
      definition: 'ext4',
      spec: '[Testpattern: Dynamic PV (default fs)(allowExpansion)] volume-expand Verify if offline PVC expansion works',
    });
    expect(re.test(offline)).toBe(false);
  });

  it('the tag skips: disruptive, serial and second-node specs, each with a reason; no curated spec is skipped', () => {
    const skips = storageSkips({ sysResource: false });
    const re = new RegExp(skipExpression(skips) ?? 'never');
    const text = (s: string): string => fullSpecText({ definition: 'ext4', spec: s });
    expect(
      re.test(
        text(
          '[Testpattern: Dynamic PV (default fs)] subPath should unmount if pod is force deleted while kubelet is down [Disruptive] [Slow] [LinuxOnly]',
        ),
      ),
    ).toBe(true);
    expect(
      re.test(text('[Testpattern: Dynamic PV (default fs)] volumeLimits should support volume limits [Serial]')),
    ).toBe(true);
    expect(
      re.test(
        text(
          '[Testpattern: Dynamic PV (default fs)] multiVolume [Slow] should concurrently access the single volume from pods on different node',
        ),
      ),
    ).toBe(true);
    for (const s of skips) expect(s.why.length).toBeGreaterThan(40);
    expect(CURATED.filter((c) => re.test(fullSpecText(c))).map((c) => c.spec)).toEqual([]);
  });
});

/** A report in e2e.test's format: Ginkgo v2 JUnit as Kubernetes configures it (status attribute, no failure message attribute). */
function report(cases: string, specialFailure = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" disabled="0" errors="0" failures="1" time="60">
  <testsuite name="Kubernetes e2e suite" package="/tmp" tests="5" disabled="0" skipped="3" errors="0" failures="1" time="60" timestamp="2026-12-03T13:00:00">
    <properties>
      <property name="SuiteSucceeded" value="false"></property>
      <property name="SpecialSuiteFailureReason" value="${specialFailure}"></property>
    </properties>
    <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="1.5"></testcase>
${cases}
    <testcase name="[SynchronizedAfterSuite]" classname="Kubernetes e2e suite" status="passed" time="0.1"></testcase>
  </testsuite>
</testsuites>`;
}
const P = 'External Storage [Driver: pmem-csi.intel.com]';
const CASES = `
    <testcase name="[It] ${P} [Testpattern: Dynamic PV (ext4)] volumes should store data" classname="Kubernetes e2e suite" status="passed" time="31.2"></testcase>
    <testcase name="[It] ${P} [StorageClass: xfs] [Testpattern: Dynamic PV (default fs)(allowExpansion)] volume-expand should resize volume when PVC is edited while pod is using it" classname="Kubernetes e2e suite" status="failed" time="300.1">
      <failure message="" type="failed">[FAILED] while waiting for fs resize to finish: timed out waiting for the condition&#xA;In [It] at: test/e2e/storage/testsuites/volume_expand.go:300 @ 12/03/26 13:00:00.000&#xA;&#xA;There were additional failures&#xA;  &lt;long timeline&gt;</failure>
      <system-err>&gt; Enter [BeforeEach] ...</system-err>
    </testcase>
    <testcase name="[It] ${P} [Testpattern: Dynamic PV (default fs)] volumeLimits should verify that all csinodes have volume limits" classname="Kubernetes e2e suite" status="skipped" time="0.2">
      <skipped message="skipped - driver pmem-csi.intel.com does not support volume limits"></skipped>
    </testcase>
    <testcase name="[It] ${P} [Testpattern: Dynamic PV (default fs)] volumeLimits should support volume limits [Serial]" classname="Kubernetes e2e suite" status="skipped" time="0">
      <skipped message="skipped"></skipped>
    </testcase>
    <testcase name="[It] ${P} [Testpattern: Dynamic PV (default fs)] provisioning should provision storage with pvc data source" classname="Kubernetes e2e suite" status="skipped" time="0">
      <skipped message="skipped"></skipped>
    </testcase>
    <testcase name="[It] [sig-storage] CSI Mock volume expansion should expand volume" classname="Kubernetes e2e suite" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>`;

describe("e2e.test's JUnit report", () => {
  const skips = storageSkips({ sysResource: false });
  const parsed = parseStorageReport(report(CASES), skips);

  it('reads each spec of our driver: definition, pattern, suite, outcome, seconds', () => {
    expect(parsed.specs.map((s) => [s.definition, s.pattern, s.suite, s.outcome, s.seconds])).toEqual([
      ['ext4', 'Dynamic PV (ext4)', 'volumes', 'passed', 31.2],
      ['xfs', 'Dynamic PV (default fs)(allowExpansion)', 'volume-expand', 'failed', 300.1],
      ['ext4', 'Dynamic PV (default fs)', 'volumeLimits', 'skipped', 0.2],
      ['ext4', 'Dynamic PV (default fs)', 'volumeLimits', 'listed', 0],
      ['ext4', 'Dynamic PV (default fs)', 'provisioning', 'unselected', 0],
    ]);
    expect(parsed.otherFailures).toEqual([]);
    expect(parsed.suiteFailure).toBeUndefined();
  });

  it('a suite stopped by Ginkgo (its timeout, an interrupt) says why: the specs it did not reach look unselected', () => {
    const r = parseStorageReport(report(CASES, 'Suite Timeout Elapsed'), skips);
    expect(r.suiteFailure).toBe('Suite Timeout Elapsed');
  });

  it('the curated run counts only its own specs, not the whole suite that our skip list covers', () => {
    const only = [
      { definition: 'ext4' as const, spec: '[Testpattern: Dynamic PV (ext4)] volumes should store data' },
      {
        definition: 'ext4' as const,
        spec: '[Testpattern: Dynamic PV (default fs)] provisioning should provision storage with pvc data source',
      },
    ];
    expect(countedSpecs(parsed.specs, only).map((s) => [s.suite, s.outcome])).toEqual([
      ['volumes', 'passed'],
      ['provisioning', 'unselected'],
    ]);
    expect(countOutcomes(countedSpecs(parsed.specs, only))).toEqual({ passed: 1, failed: 0, skipped: 0 });
  });

  it("keeps the failure text without the timeline, the suite's skip reason and our list's reason", () => {
    expect(parsed.specs[1]?.message).toBe(
      '[FAILED] while waiting for fs resize to finish: timed out waiting for the condition\nIn [It] at: test/e2e/storage/testsuites/volume_expand.go:300 @ 12/03/26 13:00:00.000',
    );
    expect(parsed.specs[2]?.message).toBe('driver pmem-csi.intel.com does not support volume limits');
    expect(parsed.specs[3]?.message).toMatch(
      /^"provisioning should provision storage with any volume data source" deploys/,
    );
  });

  it('counts passed, failed and skipped (suite and list), not the unselected; prints the tier line', () => {
    const counted = countedSpecs(parsed.specs);
    expect(countOutcomes(counted)).toEqual({ passed: 1, failed: 1, skipped: 2 });
    expect(summaryLine(counted)).toBe('k8s-storage: 1 passed, 1 failed, 2 skipped');
  });

  it('a failed suite node (not a spec) is reported apart', () => {
    const r = parseStorageReport(
      report(
        '<testcase name="[SynchronizedBeforeSuite]" classname="k" status="failed" time="1"><failure type="failed">[FAILED] no nodes are Ready</failure></testcase>',
      ),
      skips,
    );
    expect(r.otherFailures).toEqual([{ name: '[SynchronizedBeforeSuite]', message: '[FAILED] no nodes are Ready' }]);
  });

  it('panicked and timed-out specs count as failed', () => {
    const r = parseStorageReport(
      report(
        `<testcase name="[It] ${P} [Testpattern: Dynamic PV (default fs)] capacity provides storage capacity information" status="timedout" time="600"><failure type="timedout">[TIMEDOUT] A suite timeout occurred</failure></testcase>` +
          `<testcase name="[It] ${P} [Testpattern: Dynamic PV (default fs)] subPath should support existing directory" status="panicked" time="1"><error type="panicked">[PANICKED] runtime error</error></testcase>`,
      ),
      skips,
    );
    expect(r.specs.map((s) => [s.suite, s.outcome, s.message])).toEqual([
      ['capacity', 'failed', '[TIMEDOUT] A suite timeout occurred'],
      ['subPath', 'failed', '[PANICKED] runtime error'],
    ]);
  });

  it('failureSummary stops at the first blank line and at 12 lines', () => {
    expect(failureSummary('noise\n[FAILED] a\nb\n\nc')).toBe('[FAILED] a\nb');
    expect(failureSummary(Array.from({ length: 20 }, (_, i) => `[FAILED] ${i}`).join('\n')).split('\n')).toHaveLength(
      12,
    );
  });
});

describe('RESULTS.md and the command line', () => {
  it('one row per definition, pattern and suite; failures with their text; skip reasons counted', () => {
    const md = resultsMarkdown(parseStorageReport(report(CASES), storageSkips({ sysResource: false })).specs, {
      date: '2026-12-03',
      command: 'bash e2e/k8s-storage/run.sh --full',
      minutes: 95,
      kubernetes: 'v1.33.1',
    });
    expect(md).toContain('**1 passed, 1 failed, 2 skipped** of 4 specs.');
    expect(md).toContain('| ext4 | Dynamic PV (default fs) | volumeLimits | 0 | 0 | 2 |');
    expect(md).toContain('| ext4 | Dynamic PV (ext4) | volumes | 1 | 0 | 0 |');
    expect(md).toContain('| xfs | Dynamic PV (default fs)(allowExpansion) | volume-expand | 0 | 1 | 0 |');
    expect(md).toContain('  [FAILED] while waiting for fs resize to finish: timed out waiting for the condition');
    expect(md).toContain('| driver pmem-csi.intel.com does not support volume limits | the suite | 1 |');
    // The unselected spec (provisioning) is neither counted nor listed.
    expect(md).not.toContain('| provisioning |');
  });

  it("e2e.test's arguments: kubeconfig, local provider, both definitions by absolute path, focus, skip, report dir, a suite timeout below the hard one", () => {
    const args = e2eTestArgs({
      kubeconfig: '/k/kubeconfig',
      repoRoot: '/repo',
      dir: '/out',
      definitions: ['ext4', 'xfs'],
      focus: 'F',
      skip: 'S',
      timeoutMs: 20 * 60_000,
    });
    expect(args).toEqual([
      '--kubeconfig=/k/kubeconfig',
      '--provider=local',
      '--repo-root=/repo',
      '--report-dir=/out',
      '--disable-log-dump',
      '-storage.testdriver=/repo/e2e/k8s-storage/pmem-csi.yaml',
      '-storage.testdriver=/repo/e2e/k8s-storage/pmem-csi-xfs.yaml',
      '-ginkgo.focus=F',
      '-ginkgo.skip=S',
      '-ginkgo.timeout=1140s',
      '-ginkgo.no-color',
    ]);
  });

  it('PMEM_CSI_K8S_STORAGE: curated by default, full on request, anything else refused naming the allowed values', () => {
    expect(runModeFrom({})).toBe('curated');
    expect(runModeFrom({ PMEM_CSI_K8S_STORAGE: 'full' })).toBe('full');
    expect(() => runModeFrom({ PMEM_CSI_K8S_STORAGE: 'all' })).toThrow(
      'PMEM_CSI_K8S_STORAGE="all" is not a run mode; allowed: curated (default), full',
    );
  });

  it("the dry run adds Ginkgo's -ginkgo.dry-run and nothing else", () => {
    const o = {
      kubeconfig: '/k',
      repoRoot: '/r',
      dir: '/o',
      definitions: ['ext4'] as const,
      focus: 'F',
      timeoutMs: 300_000,
    };
    expect(e2eTestArgs({ ...o, dryRun: true })).toEqual([...e2eTestArgs(o), '-ginkgo.dry-run']);
  });
});

describe('the full run in shards', () => {
  it('PMEM_CSI_K8S_STORAGE_SHARDS: 3 for full and 1 for curated by default, 1-6 on request, anything else refused', () => {
    expect(shardsFrom({}, 'full')).toBe(3);
    expect(shardsFrom({}, 'curated')).toBe(1);
    expect(shardsFrom({ PMEM_CSI_K8S_STORAGE_SHARDS: '5' }, 'full')).toBe(5);
    expect(shardsFrom({ PMEM_CSI_K8S_STORAGE_SHARDS: '2' }, 'curated')).toBe(2);
    for (const bad of ['0', '7', '2.5', 'three', '-1'])
      expect(() => shardsFrom({ PMEM_CSI_K8S_STORAGE_SHARDS: bad }, 'full')).toThrow(
        `PMEM_CSI_K8S_STORAGE_SHARDS=${JSON.stringify(bad)} is not a shard count; allowed: an integer from 1 to 6 (default 3 for full, 1 for curated)`,
      );
  });

  const refs = (n: number): { definition: Definition; spec: string }[] =>
    Array.from({ length: n }, (_, i) => ({
      definition: i % 2 === 0 ? ('ext4' as const) : ('xfs' as const),
      spec: `[Testpattern: Dynamic PV (default fs)] provisioning spec ${String(i).padStart(3, '0')}`,
    }));

  it('deals every spec to exactly one shard, evenly, the same way for any input order; no empty shard', () => {
    const specs = refs(10);
    const parts = dealShards(specs, 3);
    expect(parts.map((p) => p.length)).toEqual([4, 3, 3]);
    expect(parts.flat().map(fullSpecText).sort()).toEqual(specs.map(fullSpecText).sort());
    expect(dealShards([...specs].reverse(), 3)).toEqual(parts);
    expect(dealShards(refs(2), 3).map((p) => p.length)).toEqual([1, 1]);
  });

  it("a shard's focus selects its own specs and no other shard's", () => {
    const specs = refs(9);
    const parts = dealShards(specs, 3);
    for (const [i, part] of parts.entries()) {
      const re = new RegExp(focusExpression(part));
      for (const [j, other] of parts.entries())
        for (const s of other) expect([i, j, re.test(fullSpecText(s))]).toEqual([i, j, i === j]);
    }
  });

  it('the whole suite (608 specs of both definitions, 200+ characters each) fits one argument per shard with 3 shards', () => {
    const long = Array.from({ length: 608 }, (_, i) => ({
      definition: 'xfs' as const,
      spec: `[Testpattern: Dynamic PV (filesystem volmode)] multiVolume [Slow] should access to two volumes with the same volume mode and retain data across pod recreation on the same node ${i}`,
    }));
    const sizes = dealShards(long, 3).map((p) => Buffer.byteLength(focusExpression(p)));
    expect(Math.max(...sizes)).toBeLessThan(MAX_ARG_BYTES - 100);
    expect(Math.max(...sizes)).toBeGreaterThan(40_000);
  });

  it("merges the shards' reports: each spec's outcome from the shard that ran it, listed skips once, failures named by shard", () => {
    const spec = (s: string, outcome: 'passed' | 'failed' | 'unselected' | 'listed') => ({
      definition: 'ext4' as const,
      pattern: 'Dynamic PV (default fs)',
      suite: 'provisioning',
      spec: s,
      outcome,
      seconds: 1,
    });
    const a = {
      specs: [spec('a', 'passed'), spec('b', 'unselected'), spec('c', 'listed')],
      otherFailures: [{ name: '[SynchronizedAfterSuite]', message: 'x' }],
    };
    const b = {
      specs: [spec('a', 'unselected'), spec('b', 'failed'), spec('c', 'listed')],
      otherFailures: [],
      suiteFailure: 'Suite Timeout Elapsed',
    };
    const m = mergeReports([a, b]);
    expect(m.specs.map((s) => [s.spec, s.outcome])).toEqual([
      ['a', 'passed'],
      ['b', 'failed'],
      ['c', 'listed'],
    ]);
    expect(m.otherFailures).toEqual([{ name: 'shard 1: [SynchronizedAfterSuite]', message: 'x' }]);
    expect(m.suiteFailure).toBe('shard 2: Suite Timeout Elapsed');
    expect(mergeReports([a])).toEqual(a);
  });
});
