import type { V1DaemonSet } from '@kubernetes/client-node';
import { CONFIG_HASH_ANNOTATION } from '@pmem-csi/api';
import { buildNodeDaemonSet } from './node.js';
import { testContext, testDeployment } from '../testing/fixtures.js';

describe('buildNodeDaemonSet: one driver per node PMEM (issue 32)', () => {
  const cr = testDeployment({ deviceMode: 'direct', nodeSelector: { 'pmem-zone': 'z1' } });
  const podSpec = (ds: V1DaemonSet | null): NonNullable<V1DaemonSet['spec']>['template']['spec'] =>
    ds?.spec?.template.spec;

  it('has no affinity without an exclusion (DaemonSets of earlier versions stay as they were)', () => {
    const spec = podSpec(buildNodeDaemonSet(cr, testContext(cr)));
    expect(spec?.nodeSelector).toEqual({ 'pmem-zone': 'z1' });
    expect(spec && 'affinity' in spec).toBe(false);
  });

  it('requires the exclusion terms beside the node selector, as copies, and changes the config hash with them', () => {
    const terms = [
      { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] },
      { matchExpressions: [{ key: 'b', operator: 'NotIn', values: ['2'] }] },
    ];
    const ds = buildNodeDaemonSet(cr, testContext(cr, { nodeExclusion: terms }));
    expect(podSpec(ds)?.nodeSelector).toEqual({ 'pmem-zone': 'z1' });
    expect(podSpec(ds)?.affinity).toEqual({
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
    });
    expect(
      podSpec(ds)?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0],
    ).not.toBe(terms[0]);
    const hash = (d: V1DaemonSet | null): string | undefined =>
      d?.spec?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION];
    // The hash is how the plan sees the exclusion go: server-side apply then removes the affinity.
    expect(hash(ds)).not.toBe(hash(buildNodeDaemonSet(cr, testContext(cr))));
  });
});
