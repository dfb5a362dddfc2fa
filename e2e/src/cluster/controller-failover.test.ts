// Cluster tier, controller high availability (issue 17): two controller "pods" on the host, each
// our controller process plus its own external-provisioner with leader election on one Lease
// (short timings), and three node drivers (fake devices) that register with both replicas
// (--registry-endpoint a,b). A stream of PVCs is created and deleted the whole time. The active
// replica (the Lease's holder) is killed twice:
//   1. process kill: SIGKILL of its controller process. Like a kubelet, the harness restarts a
//      container that exits: the controller at once, its sidecar when it exits on the lost
//      connection (same identity, so it could take its own Lease back; it must not lead before
//      its controller knows the nodes again).
//   2. pod kill: SIGKILL of the controller and its sidecar together, nothing restarted.
// Then the Lease is taken from the new holder (another identity writes it, as after a partition):
// its provisioner must exit within the renew deadline, nothing is provisioned while the Lease is
// someone else's, and provisioning resumes once it is free again.
// Each time, the time from the kill to the first PVC created after the kill being Bound is
// printed and must be at most 15 s. Afterwards: every PVC bound (none failed for good), every PV's
// volume on exactly one node (no duplicate), the new active replica's registry whole, and after
// deleting everything no volume left on any node. Root: unshare gives each provisioner its own
// host name (its leader-election identity).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { NODE_CONTROLLER_SAN } from '@pmem-csi/api';
import { fetchStatus, freePort, makeLocalCerts, type LocalCerts } from '@pmem-csi/driver';
import { provisionerClientLimitArgs } from '@pmem-csi/operator';
import { channelCredentials, loadCsi, unary } from '@pmem-csi/runtime';
import { MiB } from '@pmem-csi/csi';
import { startDriver, startProvisioner } from './components.js';
import { createCluster, printTimings, type KwokCluster } from './harness.js';
import type { KubeObject } from './kube.js';
import { tail, type HostProcess } from './processes.js';
import { leaseHolder, provisionerLeaseRef, PvcStream, settledVolumes, volumesGone } from './pvc-stream.js';
import { affinityNodes, csiDriver, DRIVER, pvRef, registerNodes, storageClass, TEST_NAMESPACE } from './storage.js';
import { waitFor } from './wait.js';

const STORAGE_CLASS = 'pmem-failover';
const LEASE = provisionerLeaseRef(TEST_NAMESPACE, DRIVER);
const RESUME_LIMIT_MS = 15_000;
const ELECTION_FLAGS = [
  '--feature-gates=Topology=true',
  '--leader-election=true',
  `--leader-election-namespace=${TEST_NAMESPACE}`,
  '--leader-election-lease-duration=6s',
  '--leader-election-renew-deadline=4s',
  '--leader-election-retry-period=1s',
  '--v=3',
  '--timeout=30s',
  '--retry-interval-start=500ms',
  '--retry-interval-max=2s',
  // The operator's API client limits (20/s, burst 50): the new leader's backlog is worked off as in production.
  ...provisionerClientLimitArgs(),
];
const timings: Record<string, number> = {};

/** A controller pod: our controller and its external-provisioner, restarted like containers while the pod lives. */
class Replica {
  readonly identity: string;
  readonly socket: string;
  controller: HostProcess | undefined;
  sidecar: HostProcess | undefined;
  /** The pod is gone: nothing is restarted any more. */
  deleted = false;
  readonly restarts = { controller: 0, sidecar: 0 };

  constructor(
    readonly name: string,
    readonly cluster: KwokCluster,
    readonly certs: LocalCerts,
    readonly home: { readonly dir: string; readonly registryPort: number; readonly statusPort: number },
  ) {
    this.identity = `replica-${name}`;
    this.socket = join(home.dir, 'csi.sock');
  }

  get statusUrl(): string {
    return `http://127.0.0.1:${this.home.statusPort}`;
  }

  startController(): void {
    const tls = this.certs.registry;
    this.controller = startDriver(this.cluster, `controller-${this.name}`, {
      mode: 'controller',
      csiEndpoint: this.socket,
      caFile: tls.caFile,
      certFile: tls.certFile,
      keyFile: tls.keyFile,
      registryListen: `127.0.0.1:${this.home.registryPort}`,
      metricsListen: `127.0.0.1:${this.home.statusPort}`,
      // Settle period 15 s (registry/lease-policy.ts settleMsFor): a restarted replica's sidecar waits that
      // long for Probe, well past the 6 s Lease, so the warm standby wins the Lease.
      leaseSeconds: 6,
    });
  }

  startSidecar(): void {
    this.sidecar = startProvisioner(this.cluster, {
      csiSocket: this.socket,
      hostname: this.identity,
      args: ELECTION_FLAGS,
      logName: `provisioner-${this.name}.log`,
    });
  }

  /** What a kubelet does for a live pod: start again a container that exited. */
  supervise(): void {
    if (this.deleted) return;
    if (this.controller?.exited() !== undefined) {
      this.restarts.controller++;
      this.startController();
    }
    if (this.sidecar?.exited() !== undefined) {
      this.restarts.sidecar++;
      this.startSidecar();
    }
  }

  async stop(): Promise<void> {
    this.deleted = true;
    await Promise.all([this.sidecar?.stop(5000), this.controller?.stop(5000)]);
  }
}

interface NodeRun {
  readonly id: string;
  readonly port: number;
  readonly process: HostProcess;
}

/** Every volume on every node (node-controller ListVolumes over mTLS, as the controller sees them): volume id → nodes. */
async function volumesOnNodes(certs: LocalCerts, nodes: readonly NodeRun[]): Promise<Map<string, string[]>> {
  const credentials = await channelCredentials(certs.registry, { expectedServerName: NODE_CONTROLLER_SAN });
  const where = new Map<string, string[]>();
  for (const node of nodes) {
    const client = new (loadCsi().csi.v1.Controller)(`127.0.0.1:${node.port}`, credentials);
    try {
      const res = await unary(client, client.ListVolumes, {}, { timeoutMs: 10_000 });
      for (const e of res.entries) {
        const id = e.volume?.volume_id ?? '';
        where.set(id, [...(where.get(id) ?? []), node.id]);
      }
    } finally {
      client.close();
    }
  }
  return where;
}

const holderOf = (cluster: KwokCluster): Promise<string | undefined> => leaseHolder(cluster.kube, LEASE);

describe('cluster: controller failover (two replicas, leader election, nodes registered with both)', () => {
  let cluster: KwokCluster;
  let certs: LocalCerts;
  const replicas: Replica[] = [];
  const nodes: NodeRun[] = [];
  let stream: PvcStream;
  let supervisor: NodeJS.Timeout | undefined;
  const resumed: Record<'process' | 'pod', number> = { process: Number.NaN, pod: Number.NaN };

  const byIdentity = (identity: string | undefined): Replica => {
    const r = replicas.find((x) => x.identity === identity);
    if (r === undefined) throw new Error(`the Lease is held by ${identity ?? 'nobody'}, not by one of our replicas`);
    return r;
  };
  const logs = (): string =>
    replicas
      .map(
        (r) =>
          `--- ${r.name}: controller ${r.controller?.exited() ?? 'running'}, provisioner ${r.sidecar?.exited() ?? 'running'}\n` +
          `${tail(r.controller?.log() ?? '', 5)}\n${tail(r.sidecar?.log() ?? '', 5)}`,
      )
      .join('\n');

  /** The replica's registry knows every node (available) and its settle period is over. */
  const whole = async (r: Replica): Promise<boolean> => {
    const s = await fetchStatus(r.statusUrl, 2000);
    return s.settled && s.nodes.filter((n) => n.state === 'available').length === nodes.length;
  };

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error(
        'the failover test runs two external-provisioners under their own host names (unshare --uts): needs root',
      );
    const started = Date.now();
    cluster = await createCluster({ suite: 'failover' });
    timings['cluster create'] = Date.now() - started;
    const dir = join(cluster.dir, 'failover');
    certs = await makeLocalCerts(join(dir, 'certs'));
    for (const name of ['a', 'b']) {
      await mkdir(join(dir, `controller-${name}`), { recursive: true });
      const r = new Replica(name, cluster, certs, {
        dir: join(dir, `controller-${name}`),
        registryPort: await freePort(),
        statusPort: await freePort(),
      });
      r.startController();
      replicas.push(r);
    }
    const registryEndpoint = replicas.map((r) => `127.0.0.1:${r.home.registryPort}`).join(',');
    for (const id of cluster.nodes) {
      const nodeDir = join(dir, 'nodes', id);
      await mkdir(nodeDir, { recursive: true });
      const port = await freePort();
      const proc = startDriver(cluster, `node-${id}`, {
        mode: 'node',
        nodeId: id,
        deviceMode: 'fake',
        csiEndpoint: join(nodeDir, 'csi.sock'),
        caFile: certs.nodeController.caFile,
        certFile: certs.nodeController.certFile,
        keyFile: certs.nodeController.keyFile,
        stateDir: join(nodeDir, 'state'),
        emulatedSize: 512 * MiB,
        nodeControllerListen: `127.0.0.1:${port}`,
        advertisedEndpoint: `127.0.0.1:${port}`,
        registryEndpoint,
      });
      nodes.push({ id, port, process: proc });
    }
    const { kube } = cluster;
    await registerNodes(kube, cluster.nodes);
    await kube.apply(csiDriver());
    await kube.apply(storageClass(STORAGE_CLASS, 'Immediate'));
    await waitFor(
      `both replicas to know all ${nodes.length} nodes and to settle`,
      async () => {
        const dead = [...replicas.map((r) => r.controller), ...nodes.map((n) => n.process)].find(
          (p) => p?.exited() !== undefined,
        );
        if (dead !== undefined)
          throw new Error(`${dead.name} exited (${dead.exited() ?? ''}):\n${tail(dead.log(), 10)}`);
        return (await Promise.all(replicas.map(whole))).every(Boolean) ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    for (const r of replicas) r.startSidecar();
    supervisor = setInterval(() => replicas.forEach((r) => r.supervise()), 200);
    await waitFor(
      'a provisioner to hold the Lease',
      async () => {
        const holder = await holderOf(cluster);
        return replicas.some((r) => r.identity === holder) ? holder : undefined;
      },
      { timeoutMs: 60_000, describe: logs },
    );
    timings['set-up total'] = Date.now() - started;
  }, 300_000);

  afterAll(async () => {
    clearInterval(supervisor);
    await stream?.stop().catch(() => undefined);
    await Promise.all(nodes.map((n) => n.process.stop(5000).catch(() => undefined)));
    await Promise.all(replicas.map((r) => r.stop().catch(() => undefined)));
    await cluster?.delete();
    printTimings('controller failover', timings);
  }, 120_000);

  /** Kill the Lease holder (`what`), then wait for a PVC created after the kill to be Bound; returns the new holder. */
  async function killActive(what: 'process' | 'pod'): Promise<Replica> {
    const active = byIdentity(await holderOf(cluster));
    const killedAt = Date.now();
    if (what === 'pod') {
      active.deleted = true; // the pod is gone: nothing restarts its containers
      active.controller?.child.kill('SIGKILL');
      active.sidecar?.child.kill('SIGKILL');
    } else {
      active.controller?.child.kill('SIGKILL');
    }
    const leaseMoved = waitFor(
      `the Lease to leave ${active.identity}`,
      async () => {
        const holder = await holderOf(cluster);
        return holder !== undefined && holder !== active.identity ? Date.now() - killedAt : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    ).catch(() => Number.NaN); // reported below; the resume wait fails on its own
    const ms = await waitFor(
      `provisioning to resume after the ${what} kill of ${active.identity}`,
      () => stream.resumedAfter(killedAt),
      { timeoutMs: 60_000, intervalMs: 100, describe: logs },
    );
    resumed[what] = ms;
    const moved = await leaseMoved;
    // The rest is the new leader working off the PVCs created meanwhile, oldest first (its API client
    // is rate-limited) before it reaches the first one created after the kill.
    process.stdout.write(
      `${what} kill of the active replica ${active.identity}: Lease taken over after ${(moved / 1000).toFixed(1)} s, ` +
        `first PVC created after the kill Bound after ${(ms / 1000).toFixed(1)} s\n`,
    );
    const holder = byIdentity(await holderOf(cluster));
    return holder;
  }

  it('provisions through the Lease holder while PVCs come and go', async () => {
    stream = new PvcStream({
      kube: cluster.kube,
      namespace: TEST_NAMESPACE,
      storageClass: STORAGE_CLASS,
      size: '16Mi',
      label: 'failover',
    });
    stream.start();
    await waitFor('three stream PVCs to be Bound', () => (stream.bound() >= 3 ? true : undefined), {
      timeoutMs: 60_000,
      describe: logs,
    });
  }, 90_000);

  it('process kill of the active controller: a standby takes over within 15 s; the restarted one does not lead cold', async () => {
    const before = byIdentity(await holderOf(cluster));
    const sidecarLogBefore = before.sidecar?.log().length ?? 0;
    const after = await killActive('process');
    expect(resumed.process).toBeLessThanOrEqual(RESUME_LIMIT_MS);
    expect(after.identity).not.toBe(before.identity); // the warm standby, not the restarted one
    // The killed replica came back (controller restarted; its sidecar exited on the lost connection and was restarted).
    await waitFor(
      `${before.identity} to know every node again`,
      () => whole(before).then((w) => (w ? true : undefined)),
      {
        timeoutMs: 60_000,
        describe: logs,
      },
    );
    expect(before.restarts.controller).toBe(1);
    expect(before.restarts.sidecar).toBeGreaterThanOrEqual(1); // it exits when its controller's socket goes
    // The restarted sidecar stands by for the Lease again (after its Probe wait).
    await waitFor(
      `${before.identity}'s restarted provisioner to stand by for the Lease`,
      () =>
        /attempting to acquire leader lease/i.test(before.sidecar?.log().slice(sidecarLogBefore) ?? '')
          ? true
          : undefined,
      { timeoutMs: 60_000, describe: logs },
    );
  }, 150_000);

  it('pod kill of the active replica (controller and sidecar): the other takes over within 15 s', async () => {
    const before = byIdentity(await holderOf(cluster));
    const after = await killActive('pod');
    expect(resumed.pod).toBeLessThanOrEqual(RESUME_LIMIT_MS);
    expect(after.identity).not.toBe(before.identity);
  }, 120_000);

  it('a replica that loses its Lease stops provisioning (its provisioner exits); nothing is provisioned until one leads again', async () => {
    const { kube } = cluster;
    const active = byIdentity(await holderOf(cluster));
    const sidecar = active.sidecar;
    if (sidecar === undefined) throw new Error(`${active.identity} has no provisioner`);
    const restartsBefore = active.restarts.sidecar;
    // Someone else holds the Lease, as when the holder could not renew it through an API server
    // partition and another took it meanwhile. MicroTime: RFC 3339 with microseconds.
    const microTime = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z');
    const leaseObject = {
      apiVersion: LEASE.apiVersion,
      kind: LEASE.kind,
      metadata: { name: LEASE.name, namespace: LEASE.namespace ?? TEST_NAMESPACE },
    };
    const takenAt = Date.now();
    await kube.merge({
      ...leaseObject,
      spec: {
        holderIdentity: 'intruder',
        leaseDurationSeconds: 3600,
        acquireTime: microTime(takenAt),
        renewTime: microTime(takenAt),
      },
    } as KubeObject);
    // client-go keeps leading until its renew deadline (4 s here) passes without a renewal, then the
    // sidecar exits (csi-lib-utils: OnStoppedLeading exits the process).
    const exitedAfter = await waitFor(
      `${active.identity}'s provisioner to exit after losing its Lease`,
      () => (sidecar.exited() === undefined ? undefined : Date.now() - takenAt),
      { timeoutMs: 15_000, intervalMs: 100, describe: logs },
    );
    const exitedAt = takenAt + exitedAfter;
    expect(exitedAfter).toBeLessThanOrEqual(4000 + 2 * 1000 + 1000); // renew deadline + up to two retries + margin
    expect(sidecar.log()).toMatch(/stopped leading/i);
    // While the Lease is someone else's, nothing is provisioned: not by the exited replica (restarted
    // by the supervisor, it stands for the Lease again) nor by the other one.
    await waitFor(
      'claims to be made while nobody of ours holds the Lease',
      () => ([...stream.claims.values()].filter((c) => c.createdAt > exitedAt).length >= 6 ? true : undefined),
      { timeoutMs: 20_000 },
    );
    const boundMeanwhile = [...stream.claims.entries()].filter(
      ([, c]) => c.createdAt > exitedAt && c.boundAt !== undefined,
    );
    expect(boundMeanwhile.map(([name]) => name)).toEqual([]);
    expect(await holderOf(cluster)).toBe('intruder');
    expect(active.restarts.sidecar).toBeGreaterThan(restartsBefore);
    // The Lease freed (expired): a replica takes it and works off the claims.
    const freedAt = Date.now();
    await kube.merge({
      ...leaseObject,
      spec: { leaseDurationSeconds: 1, renewTime: microTime(freedAt - 60_000) },
    } as KubeObject);
    const ms = await waitFor('provisioning to resume once the Lease is free', () => stream.resumedAfter(freedAt), {
      timeoutMs: 60_000,
      intervalMs: 100,
      describe: logs,
    });
    byIdentity(await holderOf(cluster));
    process.stdout.write(
      `lease lost: ${active.identity}'s provisioner exited ${(exitedAfter / 1000).toFixed(1)} s after its Lease was taken; ` +
        `nothing provisioned while it was someone else's; resumed ${(ms / 1000).toFixed(1)} s after it was freed\n`,
    );
  }, 120_000);

  it('no PVC failed for good, no volume twice, the new active registry whole, and nothing left after deleting all', async () => {
    await stream.stop();
    expect(stream.errors).toEqual([]);
    const { kube } = cluster;
    await stream.settled(60_000, logs);
    // Deletions of the stream settle: every PV left is Bound (none Released or Failed).
    const pvs = await settledVolumes(kube, DRIVER, 60_000);
    const where = await volumesOnNodes(certs, nodes);
    for (const pv of pvs) {
      const handle = pv.spec.csi?.volumeHandle ?? '';
      expect({ pv: pv.metadata.name, nodes: where.get(handle) }).toEqual({
        pv: pv.metadata.name,
        nodes: affinityNodes(pv),
      });
    }
    expect([...where.keys()].sort()).toEqual(pvs.map((pv) => pv.spec.csi?.volumeHandle ?? '').sort());
    const active = byIdentity(await holderOf(cluster));
    const status = await fetchStatus(active.statusUrl, 2000);
    expect(status.nodes.map((n) => n.state)).toEqual(nodes.map(() => 'available'));
    expect(status.volumes).toBe(where.size);
    const created = stream.claims.size;

    await stream.deleteAll();
    await volumesGone(kube, DRIVER, 90_000, logs);
    for (const pv of pvs) expect(await kube.get(pvRef(pv.metadata.name))).toBeUndefined();
    expect([...(await volumesOnNodes(certs, nodes)).keys()]).toEqual([]);
    process.stdout.write(
      `failover: process kill → resumed in ${(resumed.process / 1000).toFixed(1)} s; pod kill → resumed in ${(resumed.pod / 1000).toFixed(1)} s (${created} PVCs streamed)\n`,
    );
  }, 240_000);
});
