import { formatBytes, GiB, MiB, parseBytes } from './bytes.js';
import { capabilityProblem } from './capabilities.js';
import { InvalidArgumentError, OutOfRangeError } from './errors.js';
import { pluginCapabilities } from './identity.js';
import { checkContentSource, describeRange, planCreateVolume, sizeFits, sizeRange, sizeRequest } from './requests.js';

describe('sizes and capacity ranges', () => {
  it('parses int64 strings and rejects bad ones naming the field', () => {
    expect(parseBytes('1073741824', 'f')).toBe(GiB);
    expect(parseBytes(undefined, 'f')).toBe(0);
    expect(() => parseBytes('-1', 'capacity_range.required_bytes')).toThrow(
      new InvalidArgumentError('capacity_range.required_bytes must not be negative, got -1'),
    );
    expect(() => parseBytes('9007199254740993', 'f')).toThrow(
      new OutOfRangeError('f 9007199254740993 is too large; the maximum supported is 9007199254740991 bytes'),
    );
    expect(() => parseBytes('1e3', 'f')).toThrow(
      new InvalidArgumentError('f must be an integer number of bytes, got "1e3"'),
    );
  });

  it('reads "-0" as the value 0 (int64 has one zero; CSI: 0 = not specified) and any other negative as an error', () => {
    expect(parseBytes('-0', 'f')).toBe(0);
    expect(parseBytes('-000', 'f')).toBe(0);
    expect(sizeRange({ required_bytes: '-0', limit_bytes: '-0' })).toEqual({ required: 0, limit: 0 });
    expect(() => parseBytes('-01', 'capacity_range.limit_bytes')).toThrow(
      new InvalidArgumentError('capacity_range.limit_bytes must not be negative, got -01'),
    );
  });

  it('formats sizes for messages', () => {
    expect(formatBytes(3 * GiB)).toBe('3 GiB');
    expect(formatBytes(512 * MiB)).toBe('512 MiB');
    expect(formatBytes(GiB + 1)).toBe('1.00 GiB (1073741825 bytes)');
    expect(formatBytes(10)).toBe('10 bytes');
    expect(formatBytes(2 * 1024 * GiB)).toBe('2 TiB');
  });

  it('picks the default size when neither bound is given, capped by a lone limit', () => {
    expect(sizeRequest(null)).toEqual({ required: 0, limit: 0, size: GiB });
    expect(sizeRequest({ required_bytes: '0', limit_bytes: String(512 * MiB) })).toEqual({
      required: 0,
      limit: 512 * MiB,
      size: 512 * MiB,
    });
    expect(sizeRequest({ required_bytes: String(2 * GiB), limit_bytes: '0' })).toEqual({
      required: 2 * GiB,
      limit: 0,
      size: 2 * GiB,
    });
    expect(() => sizeRequest({ required_bytes: String(2 * GiB), limit_bytes: String(GiB) })).toThrow(
      new InvalidArgumentError(
        'capacity_range.limit_bytes (1 GiB) must not be smaller than capacity_range.required_bytes (2 GiB)',
      ),
    );
  });

  it('compares existing sizes with the range', () => {
    const r = sizeRequest({ required_bytes: String(GiB), limit_bytes: String(2 * GiB) });
    expect(sizeFits(GiB, r)).toBe(true);
    expect(sizeFits(3 * GiB, r)).toBe(false);
    expect(describeRange(r)).toBe('at least 1 GiB and at most 2 GiB');
    expect(describeRange(sizeRequest(null))).toBe('any size');
  });

  it('rejects content sources', () => {
    expect(() => checkContentSource({ type: 'snapshot', snapshot: { snapshot_id: 's' } })).toThrow(
      new InvalidArgumentError(
        'volume_content_source (snapshot) is not supported: this driver cannot create volumes from snapshots or clone volumes; omit volume_content_source',
      ),
    );
    expect(() => checkContentSource(null)).not.toThrow();
  });

  it('describes unsupported capabilities', () => {
    expect(
      capabilityProblem({ access_type: 'block', block: {}, access_mode: { mode: 'SINGLE_NODE_SINGLE_WRITER' } }, 'c'),
    ).toBeUndefined();
    expect(
      capabilityProblem(
        {
          access_type: 'mount',
          mount: { fs_type: 'ntfs', mount_flags: [], volume_mount_group: '' },
          access_mode: { mode: 'SINGLE_NODE_WRITER' },
        },
        'c',
      ),
    ).toBe('c.mount.fs_type "ntfs" is not supported; allowed: ext4, xfs (or empty for the default)');
    expect(capabilityProblem({ access_mode: { mode: 'SINGLE_NODE_WRITER' } }, 'c')).toBe(
      'c needs an access_type: mount or block',
    );
  });
});

describe('planCreateVolume (the one CreateVolume validation of controller and node)', () => {
  const cap = { access_type: 'mount', mount: { fs_type: 'xfs' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } };
  const req = {
    name: 'pvc-1',
    capacity_range: { required_bytes: '-0', limit_bytes: String(512 * MiB) },
    volume_capabilities: [cap],
    parameters: { usage: 'FileIO' },
    volume_content_source: null,
  };

  it('types the request: name, id, size (default capped by the limit) and parameters', () => {
    const plan = planCreateVolume(req);
    expect(plan).toMatchObject({ name: 'pvc-1', size: { required: 0, limit: 512 * MiB, size: 512 * MiB } });
    expect(plan.volumeId).toMatch(/^pvc-1-[0-9a-f]{56}$/);
    expect(plan.parameters).toMatchObject({ usage: 'FileIO', eraseAfter: true, kataContainers: false });
  });

  it('refuses each bad field with a message naming it', () => {
    expect(() => planCreateVolume({ ...req, name: '' })).toThrow(InvalidArgumentError);
    expect(() => planCreateVolume({ ...req, volume_capabilities: [] })).toThrow(
      new InvalidArgumentError('volume_capabilities is required: give at least one capability'),
    );
    expect(() => planCreateVolume({ ...req, parameters: { color: 'red' } })).toThrow(/color/);
    expect(() => planCreateVolume({ ...req, mutable_parameters: { a: 'b' } })).toThrow(
      new InvalidArgumentError(
        'mutable_parameters are not supported by this driver (no MODIFY_VOLUME capability); omit them',
      ),
    );
    expect(() => planCreateVolume({ ...req, capacity_range: { required_bytes: 'x' } })).toThrow(
      new InvalidArgumentError('capacity_range.required_bytes must be an integer number of bytes, got "x"'),
    );
  });

  it('refuses kataContainers "true" with a raw block capability, naming the capability', () => {
    const block = { access_type: 'block', block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } };
    const kata = { ...req, parameters: { kataContainers: 'true' } };
    expect(() => planCreateVolume({ ...kata, volume_capabilities: [cap, block] })).toThrow(
      new InvalidArgumentError(
        'volume_capabilities[1] asks for a raw block volume, which parameters.kataContainers "true" cannot give: a Kata Containers volume is a filesystem holding the VM\'s image file; use kataContainers "false" for raw block',
      ),
    );
    expect(planCreateVolume({ ...kata, volume_capabilities: [cap] }).parameters.kataContainers).toBe(true);
    expect(planCreateVolume({ ...req, volume_capabilities: [block] }).parameters.kataContainers).toBe(false);
  });
});

describe('pluginCapabilities', () => {
  it('advertises the controller service only for the controller, expansion for the controller and a node that can grow volumes', () => {
    expect(pluginCapabilities({ role: 'controller' })).toEqual([
      { service: { type: 'CONTROLLER_SERVICE' } },
      { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } },
      { volume_expansion: { type: 'ONLINE' } },
    ]);
    expect(pluginCapabilities({ role: 'node', canExpand: true })).toEqual([
      { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } },
      { volume_expansion: { type: 'ONLINE' } },
    ]);
    expect(pluginCapabilities({ role: 'node', canExpand: false })).toEqual([
      { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } },
    ]);
  });
});
