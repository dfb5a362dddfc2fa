// Original file: proto/csi.proto


/**
 * A topology segment, e.g. {"zone": "z1"}.
 */
export interface Topology {
  'segments'?: ({[key: string]: string});
}

/**
 * A topology segment, e.g. {"zone": "z1"}.
 */
export interface Topology__Output {
  'segments': ({[key: string]: string});
}
