// CreateVolume names (issue 14, R5): the controller refuses up front every name whose volume id a
// node would refuse (the one rule of @pmem-csi/api, which the nodes check too), and names longer
// than CSI's 128 bytes, so it never forwards a doomed create nor echoes an oversized name in
// volume_context. Before, `..` became the id "..-<hash>" that the node calls unsafe.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { volumeIdForName, volumeIdProblem, volumeNameProblem } from '@pmem-csi/api';
import { type csi, InvalidArgumentError } from '@pmem-csi/csi';
import { planControllerCreate } from './create-volume.js';

function request(name: string): csi.CreateVolumeRequest__Output {
  return {
    name,
    capacity_range: null,
    volume_capabilities: [
      {
        access_type: 'mount',
        mount: { fs_type: 'ext4', mount_flags: [], volume_mount_group: '' },
        access_mode: { mode: 'SINGLE_NODE_WRITER' },
      },
    ],
    parameters: {},
    secrets: {},
    volume_content_source: null,
    accessibility_requirements: null,
    mutable_parameters: {},
  };
}

function outcome(name: string): { id: string } | { refused: string } {
  try {
    return { id: planControllerCreate(request(name), 1024 ** 3).volumeId };
  } catch (e) {
    if (e instanceof InvalidArgumentError) return { refused: e.message };
    throw e;
  }
}

describe('CreateVolume names', () => {
  it.each(['..', '.', '-x', 'pvmove-1', '_tmeta-data', '😀😀😀😀😀😀', 'a\u0000b', 'n'.repeat(129), 'n'.repeat(5000)])(
    '%j is refused with INVALID_ARGUMENT naming `name`',
    (name) => {
      const got = outcome(name);
      expect(got).toEqual({ refused: volumeNameProblem(name) });
      expect('refused' in got && got.refused.startsWith('name ')).toBe(true);
      expect('refused' in got && got.refused.length).toBeLessThan(1200); // never the whole of a huge name
    },
  );

  it('external-provisioner names and the CSI maximum of 128 bytes are accepted', () => {
    expect(outcome('pvc-0a1b2c3d-4e5f-6789-abcd-ef0123456789')).toEqual({
      id: volumeIdForName('pvc-0a1b2c3d-4e5f-6789-abcd-ef0123456789'),
    });
    expect(outcome('n'.repeat(128))).toEqual({ id: volumeIdForName('n'.repeat(128)) });
  });

  it('property: a name the controller accepts yields an id the nodes accept; a refused one is refused by the shared rule (20,000 names)', () => {
    const names = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 140 }),
      fc.string({
        unit: fc.constantFrom('.', '-', '_', 'p', 'v', 'm', 'o', 'e', 'l', 'g', 't', 'a', '😀', ' ', '\u0007'),
        maxLength: 10,
      }),
      fc.uuid().map((u) => `pvc-${u}`),
    );
    fc.assert(
      fc.property(names, (name) => {
        const got = outcome(name);
        if ('refused' in got) return got.refused === volumeNameProblem(name);
        return got.id === volumeIdForName(name) && volumeIdProblem(got.id) === undefined;
      }),
      { numRuns: 20_000 },
    );
  });
});
