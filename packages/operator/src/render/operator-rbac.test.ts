import type { V1PolicyRule } from '@kubernetes/client-node';
import { API_GROUP, PLURAL } from '@pmem-csi/api';
import { parseOperatorFlags } from '../binary/flags.js';
import { EVER_CREATED_KINDS } from '../objects/kinds.js';
import {
  PROVISIONER_CLUSTER_RULES,
  PROVISIONER_NAMESPACE_RULES,
  RESIZER_CLUSTER_RULES,
  RESIZER_NAMESPACE_RULES,
} from '../objects/rbac.js';
import { BUILDERS } from '../objects/registry.js';
import { RESOURCES } from '../kube/resources.js';
import {
  DEFAULT_OPERATOR_INSTALL,
  OPERATOR_HTTP_PORT,
  operatorArgs,
  operatorInstallObjects,
} from './operator-install.js';
import { operatorRbacRules } from './operator-rbac.js';

const rules = operatorRbacRules();
const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '');

/** "group|resource" -> verbs granted by `list`. */
function grants(list: readonly V1PolicyRule[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const r of list) {
    for (const g of r.apiGroups ?? []) {
      for (const res of r.resources ?? []) {
        const key = `${g}|${res}`;
        if (out.has(key)) throw new Error(`${key} appears in two rules`);
        out.set(key, new Set(r.verbs));
      }
    }
  }
  return out;
}

const cluster = grants(rules.cluster);
const namespaced = grants(rules.namespace);
const has = (scope: Map<string, Set<string>>, group: string, resource: string, verbs: readonly string[]): boolean =>
  verbs.every((v) => scope.get(`${group}|${resource}`)?.has(v) === true);

describe('operator RBAC', () => {
  it('reads PmemCSIDeployments, patches their status and may set blockOwnerDeletion', () => {
    expect([...(cluster.get(`${API_GROUP}|${PLURAL}`) ?? [])]).toEqual(['get', 'list', 'watch']);
    expect([...(cluster.get(`${API_GROUP}|${PLURAL}/status`) ?? [])]).toEqual(['patch']);
    expect([...(cluster.get(`${API_GROUP}|${PLURAL}/finalizers`) ?? [])]).toEqual(['update']);
  });

  it('manages every kind a builder makes, at the scope of that kind', () => {
    for (const b of BUILDERS) {
      const scope = b.namespaced ? namespaced : cluster;
      const other = b.namespaced ? cluster : namespaced;
      expect({
        kind: b.kind,
        ok: has(scope, groupOf(b.apiVersion), b.plural, ['get', 'list', 'watch', 'create', 'patch', 'delete']),
      }).toEqual({ kind: b.kind, ok: true });
      expect({ kind: b.kind, elsewhere: other.has(`${groupOf(b.apiVersion)}|${b.plural}`) }).toEqual({
        kind: b.kind,
        elsewhere: false,
      });
    }
  });

  it("may read, list and delete the kinds only older operators made (the Go operator's are read by name), and nothing more with them", () => {
    const built = new Set(BUILDERS.map((b) => b.kind));
    const legacy = EVER_CREATED_KINDS.filter((k) => !built.has(k.kind));
    expect(legacy.map((k) => k.kind).sort()).toEqual(['MutatingWebhookConfiguration', 'StatefulSet']);
    for (const k of legacy)
      expect([...((k.namespaced ? namespaced : cluster).get(`${groupOf(k.apiVersion)}|${k.plural}`) ?? [])]).toEqual([
        'get',
        'list',
        'watch',
        'delete',
      ]);
  });

  it('lists PersistentVolumes, creates Events and holds its leader-election Lease', () => {
    expect(has(cluster, '', RESOURCES.persistentVolume.plural, ['list'])).toBe(true);
    expect(has(cluster, '', 'events', ['create'])).toBe(true);
    expect(has(namespaced, 'coordination.k8s.io', 'leases', ['get', 'create', 'update'])).toBe(true);
  });

  it('holds every permission it grants to external-provisioner and external-resizer (RBAC escalation check)', () => {
    for (const [scope, granted] of [
      [cluster, PROVISIONER_CLUSTER_RULES],
      [namespaced, PROVISIONER_NAMESPACE_RULES],
      [cluster, RESIZER_CLUSTER_RULES],
      [namespaced, RESIZER_NAMESPACE_RULES],
    ] as const) {
      for (const r of granted)
        for (const g of r.apiGroups ?? [])
          for (const res of r.resources ?? [])
            expect({ res, ok: has(scope, g, res, r.verbs) }).toEqual({ res, ok: true });
    }
  });

  it('has no wildcards, no escalate/bind/impersonate, and no cluster-wide Secrets', () => {
    const all = [...rules.cluster, ...rules.namespace];
    for (const r of all) {
      expect([...(r.apiGroups ?? []), ...(r.resources ?? []), ...r.verbs]).not.toContain('*');
      expect(r.verbs.filter((v) => ['escalate', 'bind', 'impersonate'].includes(v))).toEqual([]);
      expect(r.resourceNames).toBeUndefined();
    }
    expect(cluster.has('|secrets')).toBe(false);
  });

  it('is bound to the operator in both scopes', () => {
    const objects = operatorInstallObjects();
    const find = (kind: string): Record<string, unknown> | undefined =>
      objects.find((o) => o.kind === kind) as Record<string, unknown> | undefined;
    expect(find('ClusterRole')?.['rules']).toEqual(rules.cluster);
    expect(find('Role')?.['rules']).toEqual(rules.namespace);
    expect((find('Role')?.['metadata'] as { namespace?: string }).namespace).toBe(
      DEFAULT_OPERATOR_INSTALL.driverNamespace,
    );
    for (const kind of ['ClusterRoleBinding', 'RoleBinding']) {
      expect(find(kind)?.['subjects']).toEqual([
        { kind: 'ServiceAccount', name: 'pmem-csi-operator', namespace: DEFAULT_OPERATOR_INSTALL.operatorNamespace },
      ]);
    }
  });
});

describe('operator command line', () => {
  it('is accepted by the operator binary and means what the install says', () => {
    const config = parseOperatorFlags(operatorArgs(DEFAULT_OPERATOR_INSTALL), {});
    expect(config).toMatchObject({
      namespace: DEFAULT_OPERATOR_INSTALL.driverNamespace,
      leaderElect: true,
      metricsAddress: `:${OPERATOR_HTTP_PORT}`,
      driverImage: DEFAULT_OPERATOR_INSTALL.driverImage,
      logFormat: 'text',
      logLevel: 'info',
    });
  });

  it('probes the port the operator serves /healthz and /readyz on', () => {
    const deployment = operatorInstallObjects().find((o) => o.kind === 'Deployment') as unknown as {
      spec: {
        template: {
          spec: {
            containers: {
              ports: { name: string; containerPort: number }[];
              livenessProbe: unknown;
              readinessProbe: unknown;
            }[];
          };
        };
      };
    };
    const [container] = deployment.spec.template.spec.containers;
    expect(container?.ports).toEqual([{ name: 'http', containerPort: OPERATOR_HTTP_PORT, protocol: 'TCP' }]);
    expect(container?.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'http' } });
    expect(container?.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'http' } });
  });
});
