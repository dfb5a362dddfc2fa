// The real-PMEM guest suite, one for both device modes with PMEM: it runs ONLY inside the QEMU guest
// of e2e/qemu (two emulated 4 GiB NVDIMMs, root, ndctl, LVM, udev, ext4/xfs with DAX), once per
// mode: e2e/qemu/harness.mjs boots a guest per mode and names it in PMEM_CSI_GUEST_MODE (lvm,
// direct). Boot 1 (PMEM_CSI_GUEST_BOOT=1) starts from blank NVDIMMs; boot 2 is the same NVDIMMs
// after a power-off. In this order: the device manager on blank NVDIMMs, the CSI node service (the
// cases both modes share, written once here, and each mode's own), a second driver instance on the
// same regions (issue 32), the DeviceManager contract, and the reboot cases. What each mode adds
// and checks differently: src/testing/guest-lvm.ts and src/testing/guest-direct.ts.
import { afterAll } from '@jest/globals';
import { csiLifecycleCases } from '../testing/guest-csi-cases.js';
import { directSuite } from '../testing/guest-direct.js';
import { lvmSuite } from '../testing/guest-lvm.js';
import { migrationCases } from '../testing/guest-migration.js';
import { guestMode, type GuestMode, type GuestModeSuite } from '../testing/guest-mode.js';
import { saveToolTimings } from '../testing/guest-kit.js';

const SUITES: Record<GuestMode, GuestModeSuite> = { lvm: lvmSuite, direct: directSuite };
const mode = guestMode();
// Loading both modes' modules registers nothing: only the chosen suite's functions register cases.
const suite = SUITES[mode];

afterAll(async () => {
  await saveToolTimings(mode);
});

suite.deviceCases();

csiLifecycleCases(suite, mode);

suite.ownerCases();
suite.contract();
suite.reboot();
migrationCases(suite);
