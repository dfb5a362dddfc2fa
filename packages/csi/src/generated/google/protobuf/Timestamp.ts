// Original file: null

import type { Long } from '../../long.js';

export interface Timestamp {
  'seconds'?: (number | string | Long);
  'nanos'?: (number);
}

export interface Timestamp__Output {
  'seconds': (string);
  'nanos': (number);
}
