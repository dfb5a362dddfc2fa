// Original file: proto/csi.proto


export interface ListVolumesRequest {
  /**
   * Page size; 0 means no limit.
   */
  'max_entries'?: (number);
  /**
   * next_token of the previous page; empty for the first page.
   */
  'starting_token'?: (string);
}

export interface ListVolumesRequest__Output {
  /**
   * Page size; 0 means no limit.
   */
  'max_entries': (number);
  /**
   * next_token of the previous page; empty for the first page.
   */
  'starting_token': (string);
}
