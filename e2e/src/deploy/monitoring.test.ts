// Monitoring as users install it (issue 16): the alert rules pass `promtool check rules` and their
// unit tests (`promtool test rules`, promtool built by e2e/tools/bootstrap.sh), the chart's copy of
// the rules equals deploy/prometheus's and renders as a PrometheusRule only when enabled, and the
// Grafana dashboard and the rules use only series that the code registers — the names come from
// the components' own registries, not from a list kept here.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { ControllerMetrics } from '@pmem-csi/controller';
import { NodeMetrics } from '@pmem-csi/node';
import { OperatorMetrics } from '@pmem-csi/operator';
import { createProcessRegistry, registerCertificateExpiry, registeredNames } from '@pmem-csi/runtime';
import { runTool } from '../cluster/processes.js';
import { ToolNotBuiltError, toolPath } from '../tools.js';
import { CHART, REPO_ROOT, helmTemplate, parseManifests } from './render.js';

const RULES = join(REPO_ROOT, 'deploy/prometheus/pmem-csi-rules.yaml');
const RULE_TESTS = join(REPO_ROOT, 'deploy/prometheus/pmem-csi-rules.test.yaml');
const DASHBOARD = join(REPO_ROOT, 'deploy/grafana/pmem-csi.json');

/** Every series family the code registers: controller, node, operator, and the per-process ones. */
function registeredSeries(): Set<string> {
  const processRegistry = createProcessRegistry({ component: 'test', version: '0' });
  registerCertificateExpiry(processRegistry, []);
  const registries = [new ControllerMetrics().registry, new NodeMetrics('n').registry, new OperatorMetrics().registry, processRegistry];
  return new Set(registries.flatMap((r) => registeredNames(r)));
}

const PROMQL_WORDS = new Set([
  'sum', 'min', 'max', 'avg', 'count', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset',
  'rate', 'irate', 'increase', 'delta', 'histogram_quantile', 'time', 'label_values', 'topk', 'bottomk', 'abs', 'clamp_min', 'clamp_max',
]);

/** The metric names a PromQL expression reads (label matchers, grouping labels, strings and numbers removed). */
export function seriesOf(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '$1')
    .replace(/\[[^\]]*\]/g, '');
  const names = [...stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)].map((m) => m[0]).filter((w) => !PROMQL_WORDS.has(w) && !/^\d/.test(w));
  return [...new Set(names)];
}

/** The family of a sample name: histograms expose _bucket, _sum and _count. */
function family(name: string, known: ReadonlySet<string>): string {
  if (known.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return known.has(base) ? base : name;
}

interface RuleFile {
  groups: { name: string; rules: { alert?: string; expr: string }[] }[];
}

describe('PromQL of the rules and the dashboard', () => {
  const known = registeredSeries();

  it('the registries hold the documented series', () => {
    expect([...known]).toEqual(expect.arrayContaining([
      'pmem_csi_build_info', 'process_cpu_seconds_total', 'csi_plugin_operations_seconds', 'pmem_csi_certificate_expiry_timestamp_seconds',
      'pmem_csi_controller_nodes', 'pmem_csi_controller_lease_expiries_total', 'pmem_csi_node_capacity_bytes', 'pmem_csi_node_device_operation_seconds',
      'pmem_csi_node_orphaned_devices', 'pmem_csi_operator_reconciles_total', 'pmem_csi_operator_reconcile_duration_seconds', 'pmem_csi_operator_api_requests_total',
    ]));
  });

  it('seriesOf finds metric names and nothing else', () => {
    expect(seriesOf('histogram_quantile(0.95, sum by (le, method_name) (rate(csi_plugin_operations_seconds_bucket{job=~"a|b"}[5m])))')).toEqual(['csi_plugin_operations_seconds_bucket']);
    expect(seriesOf('a_total{x="y"} / ignoring(kind) (b{kind="m"} > 0) < 0.1')).toEqual(['a_total', 'b']);
  });

  it('every alert reads only registered series', () => {
    const rules = parse(readFileSync(RULES, 'utf8')) as RuleFile;
    const exprs = rules.groups.flatMap((g) => g.rules.map((r) => ({ alert: r.alert ?? '', expr: r.expr })));
    expect(exprs.map((e) => e.alert)).toEqual([
      'PmemCsiNodeDriverUnavailable', 'PmemCsiRegistryLeaseExpiries', 'PmemCsiCapacityLow', 'PmemCsiCertificateExpiringSoon', 'PmemCsiOperatorReconcileErrors', 'PmemCsiOperatorApiAccessFailures', 'PmemCsiOperationErrors',
    ]);
    for (const { alert, expr } of exprs) {
      const names = seriesOf(expr);
      expect({ alert, names: names.length > 0 }).toEqual({ alert, names: true });
      for (const name of names) expect({ alert, series: name, registered: known.has(family(name, known)) }).toEqual({ alert, series: name, registered: true });
    }
  });

  it('the dashboard parses, and every panel reads only registered series', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; panels: { title: string; type: string; targets?: { expr: string }[] }[] };
    expect(dashboard.uid).toBe('pmem-csi');
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThanOrEqual(15);
    const used = new Set<string>();
    for (const panel of panels) {
      expect({ panel: panel.title, targets: (panel.targets ?? []).length > 0 }).toEqual({ panel: panel.title, targets: true });
      for (const { expr } of panel.targets ?? []) {
        for (const name of seriesOf(expr)) {
          used.add(family(name, known));
          expect({ panel: panel.title, series: name, registered: known.has(family(name, known)) }).toEqual({ panel: panel.title, series: name, registered: true });
        }
      }
    }
    // Capacity, operations and registry health are all on it.
    expect([...used]).toEqual(expect.arrayContaining(['pmem_csi_node_capacity_bytes', 'csi_plugin_operations_seconds', 'pmem_csi_controller_nodes', 'pmem_csi_controller_lease_expiries_total']));
  });
});

describe('promtool', () => {
  let promtool: string;
  beforeAll(() => {
    try {
      promtool = toolPath('promtool');
    } catch (e) {
      if (e instanceof ToolNotBuiltError) throw new Error(`promtool is not available (${e.message}): run bash e2e/tools/bootstrap.sh promtool`);
      throw e;
    }
  });
  // Exit code 1 is promtool's "the rules (or their tests) are wrong": returned with the output, so that
  // the expectation shows what promtool found. Any other failure (no result in 60 s, a usage error) throws.
  const run = async (...args: string[]): Promise<{ code: number; out: string }> => {
    const r = await runTool(promtool, args, { cwd: join(REPO_ROOT, 'deploy/prometheus'), timeoutMs: 60_000, okCodes: [0, 1] });
    return { code: r.code, out: `${r.stdout}${r.stderr}` };
  };

  it('check rules: the rules file is valid', async () => {
    const r = await run('check', 'rules', RULES);
    expect(r).toEqual({ code: 0, out: expect.stringContaining('SUCCESS: 7 rules found') });
  });

  it('test rules: every alert fires when it should and not before', async () => {
    const r = await run('test', 'rules', RULE_TESTS);
    expect(r).toEqual({ code: 0, out: expect.stringContaining('SUCCESS') });
  });
});

describe('the chart\'s PrometheusRule', () => {
  it('is the rules file, copied into the chart unchanged', () => {
    expect(readFileSync(resolve(REPO_ROOT, CHART, 'files/pmem-csi-rules.yaml'), 'utf8')).toBe(readFileSync(RULES, 'utf8'));
  });

  it('renders only when monitoring.prometheusRule.enabled, with the rule groups and extra labels', () => {
    expect(parseManifests(helmTemplate()).some((o) => o.kind === 'PrometheusRule')).toBe(false);
    const objects = parseManifests(helmTemplate({ set: { 'monitoring.prometheusRule.enabled': 'true', 'monitoring.prometheusRule.labels.release': 'kps' } }));
    const rule = objects.find((o) => o.kind === 'PrometheusRule') as unknown as { apiVersion: string; metadata: { labels: Record<string, string> }; spec: RuleFile } | undefined;
    expect(rule?.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule?.metadata.labels['release']).toBe('kps');
    expect(rule?.spec).toEqual(parse(readFileSync(RULES, 'utf8')));
  });

  it('renders with the values of a release from a chart without monitoring values (helm upgrade --reuse-values)', () => {
    // --reuse-values keeps the old release's values and ignores the new chart's defaults: the
    // monitoring sections are absent. Each level set to null here is what such values lack.
    const old = { 'monitoring.prometheusRule': 'null', 'monitoring.serviceMonitor': 'null', 'monitoring.podMonitor': 'null' };
    const kinds = parseManifests(helmTemplate({ set: old })).map((o) => o.kind);
    expect(kinds.filter((k) => ['PrometheusRule', 'ServiceMonitor', 'PodMonitor'].includes(k))).toEqual([]);
    expect(kinds).toContain('Deployment');
  });
});
