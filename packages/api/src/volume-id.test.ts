import fc from 'fast-check';
import { MAX_VOLUME_ID_LENGTH, volumeIdForName, volumeIdProblem, volumeNameProblem } from './volume-id.js';

// Expected hashes computed with `printf %s <name> | sha224sum`.
describe('volumeIdForName', () => {
  it.each([
    ['pvc-0a1b2c3d-4e5f-6789-abcd-ef0123456789', 'pvc-0a-2e0356145ca3253616a102647010293f6e44281ae88aac5247213ecb'],
    ['sanity', 'sanity-e91a02df2cf66302ffa8fe07f49212a960af415e734de81b09d09219'],
    ['abc', 'abc-23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7'],
    ['pvc-1', 'pvc-1-b7783e87d0854d7b8710b12bdd62be86b775ae5a7cf1bcffaee31b2a'],
    // Characters LVM refuses are replaced in the readable prefix only; the hash covers the real name.
    ['my/vol name', 'my_vol-26e6a72ce96281355339f00d0ce0971c4f31e88b9338dd0dec88b3d8'],
    ['äbcdefgh', '_bcdef-00153564db83552a9e86b16b19ded802be225ef2249850b485d05327'],
  ])('%s -> %s', (name, id) => {
    expect(volumeIdForName(name)).toBe(id);
  });

  it('is deterministic and at most 63 characters', () => {
    const name = `pvc-${'x'.repeat(300)}`;
    expect(volumeIdForName(name)).toBe(volumeIdForName(name));
    expect(volumeIdForName(name)).toHaveLength(MAX_VOLUME_ID_LENGTH);
  });

  it('rejects an empty name', () => {
    expect(() => volumeIdForName('')).toThrow(new RangeError('volumeIdForName: the volume name must not be empty'));
  });
});

describe('volumeIdProblem and volumeNameProblem: one rule for the ids the controller makes and the nodes accept', () => {
  it('accepts the ids of ordinary names, refuses ids LVM, ndctl or the record files would refuse', () => {
    expect(volumeIdProblem(volumeIdForName('pvc-0a1b2c3d-4e5f-6789-abcd-ef0123456789'))).toBeUndefined();
    expect(volumeIdProblem(volumeIdForName('a'))).toBeUndefined();
    expect(volumeIdProblem(volumeIdForName('..'))).toBe(
      `volume id "${volumeIdForName('..')}" does not have the form <1-6 of A-Z a-z 0-9 + _ . -, not starting with "." or "-">-<56 hex digits>`,
    );
    expect(volumeIdProblem(`a_mlog-${'0'.repeat(56)}`)).toBe(
      `volume id "a_mlog-${'0'.repeat(56)}" contains "_mlog", which LVM reserves in volume names`,
    );
    expect(volumeIdProblem(`pvmove-${'0'.repeat(56)}`)).toBe(
      `volume id "pvmove-${'0'.repeat(56)}" contains "pvmove", which LVM reserves in volume names`,
    );
    expect(volumeIdProblem(`abcdefg-${'0'.repeat(56)}`)).toMatch(/does not have the form/);
    expect(volumeIdProblem(`abc-${'0'.repeat(55)}`)).toMatch(/does not have the form/);
  });

  const RULE =
    'allowed: 1 to 128 bytes (UTF-8) without control characters; the first 6 characters begin the volume id, so they must not start with "." or "-", ' +
    'must not be characters outside the Basic Multilingual Plane (such as emoji) and must not hold the words LVM reserves (pvmove..., snapshot..., _cdata, _cmeta, ' +
    '_corig, _iorig, _mimage, _mlog, _pmspare, _rimage, _rmeta, _tdata, _tmeta, _vdata, _vorigin, _wcorig); the names external-provisioner makes by default (pvc-<uid>) always qualify';

  it.each([
    ['', 'name is required'],
    ['..', `name ".." starts with "." or "-"; ${RULE}`],
    ['.hidden', `name ".hidden" starts with "." or "-"; ${RULE}`],
    ['-rf', `name "-rf" starts with "." or "-"; ${RULE}`],
    [
      'pvmove-data',
      `name "pvmove-data" yields a volume id no node accepts (volume id "${volumeIdForName('pvmove-data')}" contains "pvmove", which LVM reserves in volume names); ${RULE}`,
    ],
    [
      'a mlog',
      `name "a mlog" yields a volume id no node accepts (volume id "${volumeIdForName('a mlog')}" contains "_mlog", which LVM reserves in volume names); ${RULE}`,
    ],
    [
      '😀😀😀😀😀😀',
      `name "😀😀😀😀😀😀" has a character outside the Basic Multilingual Plane among its first 6 characters; ${RULE}`,
    ],
    ['tab\there', `name "tab\\there" is fine`],
    ['bell\u0007', `name "bell\\u0007" contains a control character; ${RULE}`],
    ['x'.repeat(129), `name is 129 bytes long; ${RULE}`],
    ['ä'.repeat(65), `name is 130 bytes long; ${RULE}`],
  ])('%j', (name, message) => {
    expect(volumeNameProblem(name) ?? `name ${JSON.stringify(name)} is fine`).toBe(message);
  });

  it('names the field it is given', () => {
    expect(volumeNameProblem('..', 'volume_id')).toBe(`volume_id ".." starts with "." or "-"; ${RULE}`);
  });

  it('accepts external-provisioner names, the CSI maximum of 128 bytes and non-ASCII names', () => {
    fc.assert(fc.property(fc.uuid(), (uid) => volumeNameProblem(`pvc-${uid}`) === undefined));
    expect(volumeNameProblem('n'.repeat(128))).toBeUndefined();
    expect(volumeNameProblem('äbcdefgh')).toBeUndefined();
    expect(volumeNameProblem('volume 😀 later')).toBeUndefined();
  });

  it('property: every name it accepts yields an id of at most 63 bytes that it accepts (20,000 names)', () => {
    const names = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 140 }),
      fc.string({
        unit: fc.constantFrom(
          '.',
          '-',
          '_',
          'm',
          'l',
          'o',
          'g',
          'p',
          'v',
          'e',
          't',
          'a',
          'd',
          ' ',
          '😀',
          'ä',
          '\u0007',
        ),
        maxLength: 12,
      }),
      fc.string({ unit: 'grapheme', maxLength: 40 }),
    );
    fc.assert(
      fc.property(names, (name) => {
        if (volumeNameProblem(name) !== undefined) return true;
        const id = volumeIdForName(name);
        return volumeIdProblem(id) === undefined && new TextEncoder().encode(id).length <= MAX_VOLUME_ID_LENGTH;
      }),
      { numRuns: 20_000 },
    );
  });
});
