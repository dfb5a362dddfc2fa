// What the real-PMEM guest suite (device/pmem.guest.test.ts, one per device mode: guest-lvm.ts,
// guest-direct.ts) is built from, in five parts:
// - device/testing/guest-env.ts      the guest's environment (boot, results, state dir), the
//                                    recording host runner and ndctl on it, the driver's log, Jest
//                                    cases of one boot;
// - device/testing/guest-record.ts   recorded tool outputs (stdout and command line, for the parser
//                                    fixtures);
// - device/testing/guest-devices.ts  DAX, mount-option, raw-device and ndctl probes;
// - guest-csi.ts                     CSI call helpers, clean-up after failed cases, a CSI test node
//                                    per describe;
// - guest-reboot.ts                  the reboot cases (boot 1 leaves volumes with data, boot 2 finds
//                                    them), with a whole node driver.
// The device-level parts stay with the devices; what wires CSI services or a node driver lives here,
// at the package's testing level. Only for code that runs inside the QEMU guest of e2e/qemu;
// importing any of them elsewhere throws.
export * from '../device/testing/guest-env.js';
export * from '../device/testing/guest-record.js';
export * from '../device/testing/guest-devices.js';
export * from './guest-csi.js';
export * from './guest-reboot.js';
