// Original file: proto/csi.proto


export interface GetPluginInfoResponse {
  /**
   * Driver name in DNS-like notation, e.g. "pmem-csi.intel.com".
   */
  'name'?: (string);
  /**
   * Driver version; opaque to the CO.
   */
  'vendor_version'?: (string);
  /**
   * Free-form build/info key-values; opaque to the CO.
   */
  'manifest'?: ({[key: string]: string});
}

export interface GetPluginInfoResponse__Output {
  /**
   * Driver name in DNS-like notation, e.g. "pmem-csi.intel.com".
   */
  'name': (string);
  /**
   * Driver version; opaque to the CO.
   */
  'vendor_version': (string);
  /**
   * Free-form build/info key-values; opaque to the CO.
   */
  'manifest': ({[key: string]: string});
}
