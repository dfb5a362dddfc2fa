import { API_GROUP_VERSION, KIND } from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import type { OwnerDeployment } from '../objects/context.js';
import { ownerReference } from '../objects/meta.js';
import {
  CONFLICT_REASONS,
  conflictFinding,
  nameCollision,
  ownershipConflict,
  precedence,
  summarizeConflicts,
  takenOverFrom,
} from './ownership.js';
import { TEST_NAMESPACE, testDeployment } from '../testing/fixtures.js';

const cr = (name: string, creationTimestamp: string | undefined, uid = `uid-of-${name}`): OwnerDeployment => {
  const base = testDeployment({}, name);
  return {
    ...base,
    metadata: { ...base.metadata, uid, ...(creationTimestamp === undefined ? {} : { creationTimestamp }) },
  };
};
const asObject = (d: OwnerDeployment): KubeObject => d as unknown as KubeObject;

const DOT = cr('pmem-csi.intel.com', '2026-01-01T00:00:05Z');
const DASH = cr('pmem-csi-intel-com', '2026-01-01T00:00:09Z');

describe('precedence', () => {
  it('puts the CR created first first; for the same second the first name; unknown times last', () => {
    expect(precedence(DOT, DASH)).toBeLessThan(0);
    expect(precedence(DASH, DOT)).toBeGreaterThan(0);
    const sameSecond = cr('pmem-csi.intel.com', '2026-01-01T00:00:09Z');
    // '-' (0x2d) sorts before '.' (0x2e).
    expect(precedence(DASH, sameSecond)).toBeLessThan(0);
    expect(precedence(sameSecond, DASH)).toBeGreaterThan(0);
    expect(precedence(cr('a', undefined), DASH)).toBeGreaterThan(0);
    expect(precedence(cr('a', undefined), cr('b', undefined))).toBeLessThan(0);
  });
});

describe('nameCollision', () => {
  const all = [DOT, DASH, cr('other.example.org', '2026-01-01T00:00:00Z')].map(asObject);

  it('refuses the CR created later, naming the one that keeps the names and their objects', () => {
    expect(nameCollision(DOT, all, TEST_NAMESPACE)).toBeUndefined();
    expect(nameCollision(DASH, all, TEST_NAMESPACE)).toEqual({
      reason: 'NameCollision',
      message:
        'object names collide with PmemCSIDeployment "pmem-csi.intel.com": both names give the object-name prefix "pmem-csi-intel-com" ' +
        '(DaemonSet pmem-csi/pmem-csi-intel-com-node, Deployment pmem-csi/pmem-csi-intel-com-controller, ClusterRole pmem-csi-intel-com-external-provisioner-runner and the other objects of that prefix). ' +
        '"pmem-csi.intel.com" keeps them by the ownership rule (the deployment with the earliest metadata.creationTimestamp keeps the object names; ' +
        "of deployments created in the same second (the timestamp has whole seconds) the one whose name sorts first, which is the one with '-' where the names first differ): " +
        '"pmem-csi.intel.com" was created first (2026-01-01T00:00:05Z; this deployment 2026-01-01T00:00:09Z). ' +
        'It takes over any of them this deployment created; this deployment writes nothing. ' +
        "Delete one of the two deployments; to run both drivers, recreate this one under a name that still differs from \"pmem-csi.intel.com\" after replacing '.' with '-'.",
    });
  });

  it('decides a tie within one second by name, the same way for both and whatever the order of the list', () => {
    const dot = cr('pmem-csi.intel.com', '2026-01-01T00:00:09Z');
    for (const both of [[dot, DASH].map(asObject), [DASH, dot].map(asObject)]) {
      expect(nameCollision(DASH, both, TEST_NAMESPACE)).toBeUndefined();
      expect(nameCollision(dot, both, TEST_NAMESPACE)?.message).toContain(
        ': both were created in the same second (2026-01-01T00:00:09Z) and "pmem-csi-intel-com" sorts first. It takes over',
      );
    }
  });

  it('names the first of several, and ignores the CR itself and CRs of other prefixes', () => {
    const third = cr('pmem.csi.intel.com', '2026-01-01T00:01:00Z');
    expect(nameCollision(third, [DASH, third, DOT].map(asObject), TEST_NAMESPACE)?.message).toMatch(
      /^object names collide with PmemCSIDeployment "pmem-csi.intel.com":/,
    );
    expect(nameCollision(DASH, [DASH].map(asObject), TEST_NAMESPACE)).toBeUndefined();
    expect(nameCollision(cr('other.example.org', '2026-01-02T00:00:00Z'), all, TEST_NAMESPACE)).toBeUndefined();
  });
});

describe('ownershipConflict', () => {
  const object = (ownerReferences: NonNullable<KubeObject['metadata']['ownerReferences']> | undefined): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: {
      name: 'pmem-csi-intel-com-node',
      namespace: TEST_NAMESPACE,
      ...(ownerReferences === undefined ? {} : { ownerReferences }),
    },
  });
  const deployments = [DOT, DASH].map(asObject);

  it('lets a CR write objects it controls, and objects nobody controls (adopted)', () => {
    expect(ownershipConflict(object([ownerReference(DASH)]), DASH, deployments)).toBeUndefined();
    expect(ownershipConflict(object(undefined), DASH, deployments)).toBeUndefined();
    expect(
      ownershipConflict(object([{ ...ownerReference(DOT), controller: false }]), DASH, deployments),
    ).toBeUndefined();
  });

  it('lets the first of two colliding CRs take over what the later one controls, whichever was deployed first', () => {
    // DOT was created first: it takes DASH's objects; DASH never takes DOT's.
    expect(ownershipConflict(object([ownerReference(DASH)]), DOT, deployments)).toBeUndefined();
    expect(takenOverFrom(object([ownerReference(DASH)]), DOT, deployments)?.metadata.name).toBe('pmem-csi-intel-com');
    expect(takenOverFrom(object([ownerReference(DOT)]), DASH, deployments)).toBeUndefined();
    // The same second, in both orders of arrival in the list: the name decides, alike for both.
    const dot = cr('pmem-csi.intel.com', '2026-01-01T00:00:09Z');
    for (const both of [[dot, DASH].map(asObject), [DASH, dot].map(asObject)]) {
      expect(takenOverFrom(object([ownerReference(dot)]), DASH, both)?.metadata.name).toBe('pmem-csi.intel.com');
      expect(ownershipConflict(object([ownerReference(dot)]), DASH, both)).toBeUndefined();
      expect(takenOverFrom(object([ownerReference(DASH)]), dot, both)).toBeUndefined();
      expect(ownershipConflict(object([ownerReference(DASH)]), dot, both)?.reason).toBe('OwnedByOtherDeployment');
    }
    // Not taken over: its own, nobody's, a deployment that is gone or whose names do not collide.
    expect(takenOverFrom(object([ownerReference(DOT)]), DOT, deployments)).toBeUndefined();
    expect(takenOverFrom(object(undefined), DOT, deployments)).toBeUndefined();
    expect(takenOverFrom(object([ownerReference(DASH)]), DOT, [DOT].map(asObject))).toBeUndefined();
    const unrelated = cr('other.example.org', '2026-01-02T00:00:00Z');
    expect(takenOverFrom(object([ownerReference(unrelated)]), DOT, [DOT, unrelated].map(asObject))).toBeUndefined();
  });

  it('refuses objects controlled by another PmemCSIDeployment, saying whether it still exists', () => {
    expect(conflictFinding(ownershipConflict(object([ownerReference(DOT)]), DASH, deployments) ?? fail())).toEqual({
      reason: 'OwnedByOtherDeployment',
      message:
        'DaemonSet pmem-csi/pmem-csi-intel-com-node is controlled by PmemCSIDeployment "pmem-csi.intel.com" (uid uid-of-pmem-csi.intel.com); ' +
        'this deployment writes nothing while another deployment owns its objects: delete one of the two deployments',
    });
    // Same name, other uid: an earlier CR of that name, deleted and recreated.
    const earlier = {
      apiVersion: API_GROUP_VERSION,
      kind: KIND,
      name: 'pmem-csi-intel-com',
      uid: 'gone',
      controller: true,
    };
    expect(conflictFinding(ownershipConflict(object([earlier]), DASH, deployments) ?? fail())).toEqual({
      reason: 'OwnedByOtherDeployment',
      message:
        'DaemonSet pmem-csi/pmem-csi-intel-com-node is controlled by PmemCSIDeployment "pmem-csi-intel-com" (uid gone), which no longer exists; ' +
        'this deployment writes nothing until the garbage collector has deleted it',
    });
  });

  it('refuses objects controlled by any other controller', () => {
    const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'other', uid: 'rs-1', controller: true };
    expect(conflictFinding(ownershipConflict(object([rs]), DASH, deployments) ?? fail())).toEqual({
      reason: CONFLICT_REASONS.otherController,
      message:
        'DaemonSet pmem-csi/pmem-csi-intel-com-node is controlled by ReplicaSet "other" (apps/v1, uid rs-1); ' +
        'this deployment writes nothing while it is: delete that object or its controller, or recreate this deployment under another name',
    });
  });

  it('summarizes several objects as the first one and a count', () => {
    const first = ownershipConflict(object([ownerReference(DOT)]), DASH, deployments) ?? fail();
    expect(summarizeConflicts([])).toBeUndefined();
    expect(summarizeConflicts([first])).toEqual(conflictFinding(first));
    expect(summarizeConflicts([first, first, first])?.message).toBe(
      'DaemonSet pmem-csi/pmem-csi-intel-com-node is controlled by PmemCSIDeployment "pmem-csi.intel.com" (uid uid-of-pmem-csi.intel.com) ' +
        '(2 more objects of this deployment are controlled by another deployment or controller); ' +
        'this deployment writes nothing while another deployment owns its objects: delete one of the two deployments',
    );
  });
});

function fail(): never {
  throw new Error('expected a conflict');
}
