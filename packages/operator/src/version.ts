// The operator's own version is the version of the PMEM-CSI build (@pmem-csi/csi DRIVER_VERSION,
// one definition that the image builds rewrite). Every object it builds records it
// (OPERATOR_VERSION_ANNOTATION in @pmem-csi/api names.ts), so that a newer operator recognises
// objects built by an older one and updates them in place. main.ts lets tests override it with
// --operator-version (the e2e upgrade scenario runs "version A" and "version B").
import { DRIVER_VERSION } from '@pmem-csi/csi';

/** Version of this operator build: the PMEM-CSI release it belongs to. */
export const OPERATOR_VERSION: string = DRIVER_VERSION;
