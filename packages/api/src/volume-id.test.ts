import { MAX_VOLUME_ID_LENGTH, volumeIdForName } from './volume-id.js';

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
