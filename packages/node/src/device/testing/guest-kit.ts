// What the real-PMEM guest suites (lvm.guest.test.ts, direct.guest.test.ts) share, in five parts:
// - guest-env.ts      the guest's environment (boot, results, state dir), the recording host
//                     runner and ndctl on it, the driver's log, Jest cases of one boot;
// - guest-record.ts   recorded tool outputs (stdout and command line, for the parser fixtures);
// - guest-devices.ts  DAX, mount-option, raw-device and ndctl probes;
// - guest-csi.ts      CSI call helpers, clean-up after failed cases, a CSI test node per describe;
// - guest-reboot.ts   the reboot cases (boot 1 leaves volumes with data, boot 2 finds them).
// Only for code that runs inside the QEMU guest of e2e/qemu; importing any of them elsewhere throws.
export * from './guest-env.js';
export * from './guest-record.js';
export * from './guest-devices.js';
export * from './guest-csi.js';
export * from './guest-reboot.js';
