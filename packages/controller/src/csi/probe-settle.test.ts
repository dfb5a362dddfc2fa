// Probe answers ready only once the start-up settle period has passed: external-provisioner probes
// until ready before it joins leader election, so a restarted replica (whose sidecar restarts with it
// under the same identity) cannot take the Lease back while it still has to answer UNAVAILABLE.
import type { csi } from '@pmem-csi/csi';
import { unary } from '@pmem-csi/runtime';
import { startTestController, TestClock, type TestController } from '../testing/index.js';

async function probe(tc: TestController): Promise<boolean | undefined> {
  const id = tc.identity;
  const res = await unary<csi.ProbeRequest, csi.ProbeResponse__Output>(id, id.Probe, {}, { timeoutMs: 5000 });
  return res.ready?.value;
}

describe('Probe and the settle period', () => {
  let tc: TestController | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it('is not ready during the settle period and ready after it', async () => {
    const clock = new TestClock();
    tc = await startTestController({ clock, settleMs: 60_000 });
    expect(tc.controller.status().settled).toBe(false);
    expect(await probe(tc)).toBe(false);
    clock.advance(59_000);
    expect(await probe(tc)).toBe(false);
    clock.advance(1_000);
    expect(tc.controller.status().settled).toBe(true);
    expect(await probe(tc)).toBe(true);
  });

  it('is ready at once without a settle period', async () => {
    tc = await startTestController({ settleMs: 0 });
    expect(await probe(tc)).toBe(true);
  });
});
