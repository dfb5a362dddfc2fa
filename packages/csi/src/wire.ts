// The shapes of the CSI request fields this package reads, as the protobuf decoder delivers them
// (snake_case, enums as strings, int64 as strings). They are structural subsets of the generated
// csi.v1 message types (generated/, exported as `csi`), so a decoded request is accepted as it is,
// and a plan reads only the fields it needs.
import type { Int64Field } from './bytes.js';

export interface CapacityRangeInput {
  readonly required_bytes?: Int64Field;
  readonly limit_bytes?: Int64Field;
}

export interface MountInput {
  readonly fs_type?: string;
  readonly mount_flags?: readonly string[];
  readonly volume_mount_group?: string;
}

export interface VolumeCapabilityInput {
  readonly access_mode?: { readonly mode?: string } | null;
  readonly access_type?: string;
  readonly mount?: MountInput | null;
  readonly block?: object | null;
}

export interface ContentSourceInput {
  readonly type?: string;
  readonly snapshot?: object | null;
  readonly volume?: object | null;
}

export interface CreateVolumeInput {
  readonly name: string;
  readonly capacity_range: CapacityRangeInput | null;
  readonly volume_capabilities: readonly VolumeCapabilityInput[];
  readonly parameters: Readonly<Record<string, string>>;
  readonly volume_content_source: ContentSourceInput | null;
  readonly mutable_parameters?: Readonly<Record<string, string>>;
}
