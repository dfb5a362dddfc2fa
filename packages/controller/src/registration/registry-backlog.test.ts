// The registry port listens with the largest backlog the kernel allows (issue 28): with grpc-js's
// bind (Node's default backlog, 511) the accept queue stayed full for seconds of a 5,000-node
// registration storm and nodes got resets for their TLS ClientHello. `ss` (iproute2) reports a
// listening socket's backlog as its Send-Q; Linux caps a requested backlog at net.core.somaxconn.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { listenBacklog } from '@pmem-csi/runtime/testing';
import { readFileSync } from 'node:fs';
import { REGISTRY_BACKLOG } from '../controller.js';
import { startTestController, type TestController } from '../testing/harness.js';

describe('registry listen backlog', () => {
  let t: TestController;
  let small: TestController;
  beforeAll(async () => {
    t = await startTestController();
    small = await startTestController({ registryBacklog: 64 });
  });
  afterAll(async () => {
    await t.stop();
    await small.stop();
  });

  it('is net.core.somaxconn (the kernel cap of REGISTRY_BACKLOG), not Node default 511', () => {
    const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
    expect(listenBacklog(t.controller.registryPort)).toBe(Math.min(REGISTRY_BACKLOG, somaxconn));
  });

  it('is the registryBacklog option when given', () => {
    expect(listenBacklog(small.controller.registryPort)).toBe(64);
  });
});
