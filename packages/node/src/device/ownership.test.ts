import { FailedPreconditionError, InvalidArgumentError } from '@pmem-csi/csi';
import type { NdNamespace } from './ndctl.js';
import {
  PmemOwner,
  RefusalLog,
  judgeRegion,
  namespaceClaim,
  namespaceMark,
  ownerMark,
  pmemOwnedByOthers,
  tagOwners,
  uuidMark,
  vgClaims,
  type Refusal,
} from './ownership.js';

// `printf %s <driver name> | sha256sum | cut -c1-10`, as README tells users to compute it.
const DEFAULT_MARK = '5c3f485886'; // pmem-csi.intel.com
const SECOND_MARK = 'a99c7e08e1'; // second.pmem-csi.example
const DASHED_MARK = '03d5953224'; // pmem-csi-intel-com

function ns(over: Partial<NdNamespace>): NdNamespace {
  return {
    dev: 'namespace0.1',
    region: 'region0',
    mode: 'fsdax',
    size: 1056964608,
    uuid: '3e0b5f7a-9c1d-4e2f-8a3b-4c5d6e7f8a9b',
    rawUuid: undefined,
    name: 'pvc-8a-933e210faec20ae105ba0ee4eacbb67925ecb09fb3bede2edd23c303',
    blockdev: 'pmem0.1',
    map: 'dev',
    sectorSize: 512,
    align: 2097152,
    enabled: true,
    ...over,
  };
}

describe('owner marks', () => {
  it('a mark is the first 40 bits of SHA-256 of the driver name', () => {
    expect(ownerMark('pmem-csi.intel.com')).toBe(DEFAULT_MARK);
    expect(ownerMark('second.pmem-csi.example')).toBe(SECOND_MARK);
    // Names whose object names collide (operator: '.' versus '-') are still different owners.
    expect(ownerMark('pmem-csi-intel-com')).toBe(DASHED_MARK);
    expect(new PmemOwner().driverName).toBe('pmem-csi.intel.com');
    expect(new PmemOwner().mark).toBe(DEFAULT_MARK);
  });

  it('a namespace uuid carries the mark: 706d656d-MMMM-8MMM-8MMM-<random>, read back from raw_uuid', () => {
    const owner = new PmemOwner('second.pmem-csi.example');
    const uuid = owner.namespaceUuid('0123456789ab');
    expect(uuid).toBe('706d656d-a99c-87e0-88e1-0123456789ab');
    expect(uuidMark(uuid)).toBe(SECOND_MARK);
    expect(uuidMark(uuid.toUpperCase())).toBe(SECOND_MARK);
    expect(owner.namespaceUuid()).toMatch(/^706d656d-a99c-87e0-88e1-[0-9a-f]{12}$/);
    expect(owner.namespaceUuid()).not.toBe(owner.namespaceUuid());
    // fsdax: "uuid" is the pfn device's, the namespace's own is raw_uuid.
    expect(namespaceMark(ns({ rawUuid: uuid }))).toBe(SECOND_MARK);
    // raw mode: "uuid" is the namespace's own.
    expect(namespaceMark(ns({ mode: 'raw', uuid }))).toBe(SECOND_MARK);
  });

  it('any other uuid is unmarked: random ones (the Go driver, ndctl), a destroyed seed, none', () => {
    for (const other of [
      '3e0b5f7a-9c1d-4e2f-8a3b-4c5d6e7f8a9b',
      '00000000-0000-0000-0000-000000000000',
      '706d656d-a99c-47e0-88e1-0123456789ab', // version 4, not 8
      '706d656d-a99c-87e0-c8e1-0123456789ab', // another variant
      '706d656e-a99c-87e0-88e1-0123456789ab',
      undefined,
    ])
      expect(uuidMark(other)).toBeUndefined();
  });

  it('mayUse: its own and unmarked namespaces, never another driver’s', () => {
    const owner = new PmemOwner('second.pmem-csi.example');
    expect(owner.mayUse(ns({ rawUuid: owner.namespaceUuid() }))).toBe(true);
    expect(owner.mayUse(ns({}))).toBe(true);
    expect(owner.mayUse(ns({ rawUuid: new PmemOwner().namespaceUuid() }))).toBe(false);
  });

  it('refuses a driver name that cannot be an LVM tag', () => {
    for (const bad of ['', 'pmem csi', 'pmem-csi.intel.com\n', 'x'.repeat(1000)]) {
      expect(() => new PmemOwner(bad)).toThrow(
        new InvalidArgumentError(
          `driver name ${JSON.stringify(bad)} cannot mark PMEM: the LVM tag pmem-csi.intel.com/owner=<driver name> allows letters, digits and "_+.-/=!:#&", at most 1024 characters in all`,
        ),
      );
    }
    expect(new PmemOwner('a'.repeat(253)).tag).toHaveLength(25 + 253);
  });
});

describe('claims and the owner of a region', () => {
  const self = new PmemOwner('second.pmem-csi.example');
  const vg = (tags: string[]) => ({ name: 'ndbus0region0fsdax', size: 1, free: 1, extentSize: 1, tags });

  it('a volume group claims for every owner tag, by name; other tags claim nothing', () => {
    expect(tagOwners(['root', 'pmem-csi.intel.com/owner=pmem-csi.intel.com', 'pmem-csi.intel.com/owner=b'])).toEqual([
      'pmem-csi.intel.com',
      'b',
    ]);
    expect(vgClaims(vg(['os', 'pmem-csi.intel.com/owner=pmem-csi.intel.com']))).toEqual([
      { mark: DEFAULT_MARK, driverName: 'pmem-csi.intel.com', resource: 'volume group ndbus0region0fsdax' },
    ]);
    expect(vgClaims(vg([]))).toEqual([]);
  });

  it('a namespace claims when marked and not destroyed (an idle seed of size 0 keeps no PMEM)', () => {
    const marked = new PmemOwner().namespaceUuid('0123456789ab');
    expect(namespaceClaim(ns({ rawUuid: marked, name: 'pmem-csi', dev: 'namespace0.0' }))).toEqual({
      mark: DEFAULT_MARK,
      resource: 'namespace namespace0.0 "pmem-csi"',
    });
    expect(namespaceClaim(ns({ mode: 'raw', uuid: marked, name: undefined }))).toEqual({
      mark: DEFAULT_MARK,
      resource: 'namespace namespace0.1',
    });
    expect(namespaceClaim(ns({ rawUuid: marked, size: 0 }))).toBeUndefined();
    expect(namespaceClaim(ns({}))).toBeUndefined();
  });

  it('nobody’s region and its own region are usable; another driver’s is refused, naming it and its resources', () => {
    expect(judgeRegion(self, 'region0', [])).toBeUndefined();
    expect(judgeRegion(self, 'region0', [{ mark: SECOND_MARK, resource: 'namespace namespace0.1' }])).toBeUndefined();
    expect(
      judgeRegion(self, 'region0', [
        { mark: DEFAULT_MARK, resource: 'namespace namespace0.0 "pmem-csi"' },
        { mark: DEFAULT_MARK, driverName: 'pmem-csi.intel.com', resource: 'volume group ndbus0region0fsdax' },
        { mark: DEFAULT_MARK, driverName: 'pmem-csi.intel.com', resource: 'volume group ndbus0region0fsdax' },
      ]),
    ).toEqual({
      region: 'region0',
      ownerMark: DEFAULT_MARK,
      owner: 'pmem-csi.intel.com',
      resources: ['namespace namespace0.0 "pmem-csi"', 'volume group ndbus0region0fsdax'],
    });
    expect(judgeRegion(self, 'region1', [{ mark: DASHED_MARK, resource: 'namespace namespace1.3 "x"' }])).toEqual({
      region: 'region1',
      ownerMark: DASHED_MARK,
      owner: undefined,
      resources: ['namespace namespace1.3 "x"'],
    });
  });

  it('a region with marks of several drivers belongs to the first mark, for each of them alike', () => {
    const claims = [
      { mark: SECOND_MARK, resource: 'namespace namespace0.2' },
      { mark: DEFAULT_MARK, resource: 'namespace namespace0.1' },
    ];
    // pmem-csi.intel.com (5c3f…) sorts before second.pmem-csi.example (a99c…): it keeps the region.
    expect(judgeRegion(new PmemOwner(), 'region0', claims)).toBeUndefined();
    expect(judgeRegion(self, 'region0', claims)).toMatchObject({ ownerMark: DEFAULT_MARK });
    expect(judgeRegion(self, 'region0', [...claims].reverse())).toMatchObject({ ownerMark: DEFAULT_MARK });
    // A third driver is refused in favour of the same one.
    expect(judgeRegion(new PmemOwner('third'), 'region0', claims)).toMatchObject({ ownerMark: DEFAULT_MARK });
  });
});

describe('reporting refusals', () => {
  const byName: Refusal = {
    region: 'region0',
    ownerMark: DEFAULT_MARK,
    owner: 'pmem-csi.intel.com',
    resources: ['volume group ndbus0region0fsdax'],
  };
  const byMark: Refusal = {
    region: 'region1',
    ownerMark: DASHED_MARK,
    owner: undefined,
    resources: ['namespace namespace1.0 "pvc-1f-af6f"', 'namespace namespace1.1 "pvc-9b-d82c"'],
  };

  it('start-up fails naming every region, its owner and what carries the claim', () => {
    expect(pmemOwnedByOthers(new PmemOwner('second.pmem-csi.example'), [byName, byMark])).toEqual(
      new FailedPreconditionError(
        'no PMEM on this node is left for driver second.pmem-csi.example (owner mark a99c7e08e1): ' +
          'region0 belongs to driver pmem-csi.intel.com (volume group ndbus0region0fsdax); ' +
          'region1 belongs to the driver with owner mark 03d5953224 (namespace namespace1.0 "pvc-1f-af6f", namespace namespace1.1 "pvc-9b-d82c"). ' +
          "One driver manages a region's PMEM: keep this driver off this node (its node selector), or free the regions " +
          "by deleting the other driver's volumes, namespaces and volume groups there",
      ),
    );
  });

  it('warns once per refusal while it lasts; a new owner or a refusal that comes back is news', () => {
    const lines: Array<[string, Record<string, unknown>]> = [];
    const log = new RefusalLog((msg, fields) => lines.push([msg, fields]));
    log.report(['region0', 'region1'], [byName, byMark]);
    log.report(['region0', 'region1'], [byName, byMark]);
    log.report(['region1'], []); // region1 free again; region0 not judged this time
    log.report(['region0', 'region1'], [byName, byMark]);
    log.report(['region0'], [{ ...byName, owner: 'other', ownerMark: '0000000000' }]);
    const msg = 'region refused: its PMEM belongs to another PMEM-CSI driver, which this one never touches';
    expect(lines).toEqual([
      [
        msg,
        {
          region: 'region0',
          owner: 'driver pmem-csi.intel.com',
          ownerMark: DEFAULT_MARK,
          resources: ['volume group ndbus0region0fsdax'],
        },
      ],
      [
        msg,
        {
          region: 'region1',
          owner: 'the driver with owner mark 03d5953224',
          ownerMark: DASHED_MARK,
          resources: byMark.resources,
        },
      ],
      [msg, expect.objectContaining({ region: 'region1' })],
      [msg, { region: 'region0', owner: 'driver other', ownerMark: '0000000000', resources: byName.resources }],
    ]);
  });
});
