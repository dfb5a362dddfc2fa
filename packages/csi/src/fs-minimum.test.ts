import { MiB } from './bytes.js';
import { InvalidArgumentError, OutOfRangeError } from './errors.js';
import { XFS_MIN_BYTES, atFilesystemMinimum, capabilitiesMinimum } from './fs-minimum.js';
import { planCreateVolume } from './requests.js';

const mode = { mode: 'SINGLE_NODE_WRITER' };
const xfs = { access_type: 'mount', mount: { fs_type: 'xfs' }, access_mode: mode };
const ext4 = { access_type: 'mount', mount: { fs_type: 'ext4' }, access_mode: mode };
const defaultFs = { access_type: 'mount', mount: { fs_type: '' }, access_mode: mode };
const block = { access_type: 'block', block: {}, access_mode: mode };

describe('the smallest volume a filesystem can be made on', () => {
  it('is 300 MiB for xfs and nothing for ext4, the default fs or raw block', () => {
    expect(XFS_MIN_BYTES).toBe(300 * MiB);
    expect(capabilitiesMinimum([xfs])).toEqual({
      bytes: XFS_MIN_BYTES,
      reason: 'volume_capabilities[0].mount.fs_type xfs needs at least 300 MiB',
    });
    expect(capabilitiesMinimum([ext4, defaultFs, block]).bytes).toBe(0);
    expect(capabilitiesMinimum([block, xfs]).reason).toBe(
      'volume_capabilities[1].mount.fs_type xfs needs at least 300 MiB',
    );
  });

  it('raises a small xfs size when the limit allows, keeps larger sizes, refuses a limit below the minimum', () => {
    expect(atFilesystemMinimum(16 * MiB, 0, [xfs])).toBe(XFS_MIN_BYTES);
    expect(atFilesystemMinimum(16 * MiB, 300 * MiB, [xfs])).toBe(XFS_MIN_BYTES);
    expect(atFilesystemMinimum(512 * MiB, 0, [xfs])).toBe(512 * MiB);
    expect(atFilesystemMinimum(16 * MiB, 32 * MiB, [ext4])).toBe(16 * MiB);
    expect(() => atFilesystemMinimum(16 * MiB, 64 * MiB, [xfs])).toThrow(
      new OutOfRangeError(
        'capacity_range.limit_bytes (64 MiB) is below the smallest volume the filesystem can be made on: volume_capabilities[0].mount.fs_type xfs needs at least 300 MiB; raise the limit or use ext4',
      ),
    );
  });
});

describe('planCreateVolume with xfs', () => {
  const req = (range: { required_bytes?: string; limit_bytes?: string }, caps = [xfs]) => ({
    name: 'pvc-x',
    capacity_range: range,
    volume_capabilities: caps,
    parameters: {},
    volume_content_source: null,
  });

  it('creates 300 MiB for a 16 MiB xfs claim, while the requested range stays what was asked (idempotency compares against it)', () => {
    expect(planCreateVolume(req({ required_bytes: String(16 * MiB) })).size).toEqual({
      required: 16 * MiB,
      limit: 0,
      size: XFS_MIN_BYTES,
    });
    expect(planCreateVolume(req({ required_bytes: String(16 * MiB) }, [ext4])).size.size).toBe(16 * MiB);
  });

  it('refuses a limit below the xfs minimum as OUT_OF_RANGE, an unsupported fs type as INVALID_ARGUMENT', () => {
    expect(() => planCreateVolume(req({ required_bytes: String(16 * MiB), limit_bytes: String(100 * MiB) }))).toThrow(
      OutOfRangeError,
    );
    const ntfs = { ...xfs, mount: { fs_type: 'ntfs' } };
    expect(() => planCreateVolume(req({ required_bytes: String(16 * MiB) }, [ntfs]))).toThrow(
      new InvalidArgumentError(
        'volume_capabilities[0].mount.fs_type "ntfs" is not supported; allowed: ext4, xfs (or empty for the default)',
      ),
    );
  });
});
