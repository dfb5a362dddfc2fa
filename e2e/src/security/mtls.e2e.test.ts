// Mutual-TLS campaign (issue 14, R3) against the two TCP servers as the driver runs them — the
// registry of the real controller process and the node-controller service of a real node process —
// with real clients over real sockets: node:tls (to see the server's verdict on the handshake),
// @grpc/grpc-js (a real call) and `openssl s_client`. Every hostile client must be refused for the
// expected reason (the alert it receives, the gRPC status, and the reason the server logs for that
// very connection), the controls must be served, and no log line may carry key material. Then the
// certificates of the controller, the node and a client are rotated — a new leaf, a second CA
// trusted, leaves of the second CA, the first CA retired — while a load of calls runs: 0 failed
// calls, the node registered throughout. Each campaign prints one summary line.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_CONTROLLER_SAN, REGISTRY_SAN } from '@pmem-csi/api';
import { channelCredentials, isServiceError, loadCsi, loadRegistry, type CertificateAndKey } from '@pmem-csi/runtime';
import { Campaign, logLines, waitForLogLine, type CaseOutcome, type LogLine } from './campaign.js';
import { startCampaignDrivers, type CampaignDrivers } from './drivers.js';
import { keyMaterialLines, leaf, makeCampaignPki, writeTlsSet, type CampaignPki, type HostileCerts } from './pki.js';
import { clientCredentials, grpcCall, probeOpenssl, probeTls, reachedService, type TlsClient } from './probes.js';

jest.setTimeout(180_000);

interface Target {
  readonly title: string;
  readonly kind: 'registry' | 'node-controller';
  readonly port: number;
  /** The server's identity (SNI, the SAN clients expect). */
  readonly servername: string;
  /** The one client identity it accepts. */
  readonly clientIdentity: string;
  /** A client certificate it must accept. */
  readonly good: CertificateAndKey;
  readonly logFile: string;
}

const REFUSED_HANDSHAKE = 'TLS handshake refused';
const REFUSED_CALL = 'mutual TLS call refused';
/**
 * The TLS alert a refused client sees, by the error code node:tls gives it. The alert is the same
 * on the wire (40 handshake_failure, 70 protocol_version); its name in the code is OpenSSL's reason
 * string, which OpenSSL 3.2 renamed from "sslv3 alert ..." to "ssl/tls alert ..." (Node.js 20 ships
 * OpenSSL 3.0, Node.js 24 OpenSSL 3.5). Either name is the right alert; any other is a failure.
 */
const HANDSHAKE_FAILURE_ALERT = ['ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE', 'ERR_SSL_SSL/TLS_ALERT_HANDSHAKE_FAILURE'];
const PROTOCOL_VERSION_ALERT = ['ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION'];

describe('mutual TLS campaign against the registry and node-controller servers', () => {
  let dir = '';
  let pki: CampaignPki;
  let drivers: CampaignDrivers;
  const hostilePairs: CertificateAndKey[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-csi-mtls-'));
    pki = await makeCampaignPki();
    drivers = await startCampaignDrivers(dir, pki);
  }, 150_000);

  afterAll(async () => {
    await drivers?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  const targets = (): Target[] => [
    {
      title: 'mTLS registry server (controller process)',
      kind: 'registry',
      port: drivers.registryPort,
      servername: REGISTRY_SAN,
      clientIdentity: NODE_CONTROLLER_SAN,
      good: pki.nodeController,
      logFile: drivers.controller.logFile,
    },
    {
      title: 'mTLS node-controller server (node process)',
      kind: 'node-controller',
      port: drivers.nodeControllerPort,
      servername: NODE_CONTROLLER_SAN,
      clientIdentity: REGISTRY_SAN,
      good: pki.registry,
      logFile: drivers.node.logFile,
    },
  ];

  /** A node:tls handshake that must be refused with `alert` (when given) and logged by the server with `logCode` for that connection. */
  async function tlsCase(
    t: Target,
    name: string,
    client: TlsClient,
    expect_: { alert?: readonly string[]; logCode: string },
  ): Promise<CaseOutcome> {
    const skip = (await logLines(t.logFile)).length;
    const r = await probeTls(t.port, client);
    if (r.notOffered === true) return { name, verdict: 'not offered', detail: r.detail };
    if (r.accepted) return { name, verdict: 'failed', detail: `accepted: ${r.detail}` };
    if (expect_.alert !== undefined && !expect_.alert.includes(r.code ?? ''))
      return {
        name,
        verdict: 'failed',
        detail: `refused with ${r.code ?? r.detail}, expected the alert ${expect_.alert.join(' or ')}`,
      };
    const line = await waitForLogLine(
      t.logFile,
      skip,
      (l) => l.msg === REFUSED_HANDSHAKE && l.peer === `127.0.0.1:${r.localPort}`,
    );
    if (line?.code !== expect_.logCode)
      return {
        name,
        verdict: 'failed',
        detail: `the server logged ${JSON.stringify(line ?? 'nothing')} for 127.0.0.1:${r.localPort}, expected code ${expect_.logCode}`,
      };
    return {
      name,
      verdict: 'refused',
      detail: `client saw ${r.code ?? 'the connection closed'}; server logged ${line.code}: ${line.reason}`,
    };
  }

  /** A real gRPC call that must fail with `code` (and `details`), the refusal logged by the server. */
  async function grpcCase(
    t: Target,
    name: string,
    pair: CertificateAndKey | undefined,
    expect_: { code: grpc.status; details?: string; log: (l: LogLine) => boolean },
  ): Promise<CaseOutcome> {
    const skip = (await logLines(t.logFile)).length;
    const r = await grpcCall(t, clientCredentials(pki.ca.certPem, pair));
    if (r.code !== expect_.code || (expect_.details !== undefined && r.details !== expect_.details)) {
      return {
        name,
        verdict: 'failed',
        detail: `the call ended with ${r.ok ? 'OK' : `${grpc.status[r.code ?? 2]}: ${r.details}`}, expected ${grpc.status[expect_.code]}${expect_.details ? `: ${expect_.details}` : ''}`,
      };
    }
    const line = await waitForLogLine(t.logFile, skip, expect_.log);
    if (line === undefined)
      return { name, verdict: 'failed', detail: 'the call was refused, but the server logged no refusal' };
    return {
      name,
      verdict: 'refused',
      detail: `${grpc.status[expect_.code]}; server logged ${line.code}: ${line.reason}`,
    };
  }

  /** `openssl s_client` that must be refused with an alert containing `alert`, logged with `logCode`. */
  async function opensslCase(
    t: Target,
    name: string,
    args: readonly string[],
    expect_: { alert: string; logCode: string },
  ): Promise<CaseOutcome> {
    const files = await writeTlsSet(join(dir, 'openssl-client', t.kind), pki.ca.certPem, t.good);
    const skip = (await logLines(t.logFile)).length;
    const r = await probeOpenssl(t.port, { ...files, servername: t.servername, args });
    if (r.notOffered === true) return { name, verdict: 'not offered', detail: r.detail };
    if (r.accepted) return { name, verdict: 'failed', detail: `accepted: ${r.detail}` };
    if (!(r.code ?? '').includes(expect_.alert))
      return {
        name,
        verdict: 'failed',
        detail: `refused with ${r.code ?? r.detail}, expected the alert "${expect_.alert}"`,
      };
    const line = await waitForLogLine(
      t.logFile,
      skip,
      (l) => l.msg === REFUSED_HANDSHAKE && l.code === expect_.logCode,
    );
    if (line === undefined) {
      const logged = (await logLines(t.logFile)).slice(skip).filter((l) => l.msg === REFUSED_HANDSHAKE);
      return {
        name,
        verdict: 'failed',
        detail: `the server logged no refusal with code ${expect_.logCode} (it logged ${JSON.stringify(logged)})`,
      };
    }
    return { name, verdict: 'refused', detail: `openssl saw "${r.code}"; server logged ${line.code}: ${line.reason}` };
  }

  async function controls(t: Target): Promise<CaseOutcome[]> {
    const tls = await probeTls(t.port, { caPem: pki.ca.certPem, pair: t.good, servername: t.servername });
    const call = await grpcCall(t, clientCredentials(pki.ca.certPem, t.good));
    return [
      {
        name: 'control: the right client over node:tls',
        verdict: tls.accepted ? 'accepted' : 'failed',
        detail: tls.detail,
      },
      {
        name: 'control: the right client, a real gRPC call',
        verdict: reachedService(call) ? 'accepted' : 'failed',
        detail: call.ok ? 'OK' : `${grpc.status[call.code ?? 2]}: ${call.details}`,
      },
    ];
  }

  async function certificateCases(t: Target, h: HostileCerts): Promise<CaseOutcome[]> {
    const client = (pair?: CertificateAndKey): TlsClient => ({
      caPem: pki.ca.certPem,
      ...(pair ? { pair } : {}),
      servername: t.servername,
    });
    const handshakeRefused =
      (code: string) =>
      (l: LogLine): boolean =>
        l.msg === REFUSED_HANDSHAKE && l.code === code;
    const out: CaseOutcome[] = [];
    for (const [what, pair, code] of [
      ['wrong CA', h.wrongCa, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
      ['expired', h.expired, 'CERT_HAS_EXPIRED'],
      ['not yet valid', h.notYetValid, 'CERT_NOT_YET_VALID'],
    ] as const) {
      out.push(await tlsCase(t, `${what} (node:tls)`, client(pair), { logCode: code }));
      out.push(
        await grpcCase(t, `${what} (gRPC)`, pair, { code: grpc.status.UNAVAILABLE, log: handshakeRefused(code) }),
      );
    }
    out.push(
      await tlsCase(t, 'no client certificate (node:tls)', client(), {
        alert: ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED'],
        logCode: 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE',
      }),
    );
    out.push(
      await grpcCase(t, 'no client certificate (gRPC)', undefined, {
        code: grpc.status.UNAVAILABLE,
        log: handshakeRefused('ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE'),
      }),
    );
    const callRefused = (l: LogLine): boolean => l.msg === REFUSED_CALL && l.code === 'PERMISSION_DENIED';
    out.push(
      await grpcCase(t, 'wrong SAN (gRPC)', h.wrongSan, {
        code: grpc.status.PERMISSION_DENIED,
        details: `client certificate DNS SAN must include ${t.clientIdentity} (has: pmem-intruder)`,
        log: callRefused,
      }),
    );
    const ownIdentity = t.kind === 'registry' ? pki.registry : pki.nodeController;
    out.push(
      await grpcCase(t, "the server's own identity as client (gRPC)", ownIdentity, {
        code: grpc.status.PERMISSION_DENIED,
        details: `client certificate DNS SAN must include ${t.clientIdentity} (has: ${t.servername})`,
        log: callRefused,
      }),
    );
    return out;
  }

  async function protocolCases(t: Target): Promise<CaseOutcome[]> {
    const base: TlsClient = { caPem: pki.ca.certPem, pair: t.good, servername: t.servername };
    const out: CaseOutcome[] = [];
    for (const v of ['TLSv1', 'TLSv1.1'] as const) {
      out.push(
        await tlsCase(
          t,
          `${v} (node:tls)`,
          { ...base, minVersion: v, maxVersion: v, ciphers: 'DEFAULT@SECLEVEL=0' },
          { alert: PROTOCOL_VERSION_ALERT, logCode: 'ERR_SSL_UNSUPPORTED_PROTOCOL' },
        ),
      );
    }
    for (const [v, flag] of [
      ['TLSv1', '-tls1'],
      ['TLSv1.1', '-tls1_1'],
    ] as const) {
      out.push(
        await opensslCase(t, `${v} (openssl s_client)`, [flag, '-cipher', 'DEFAULT@SECLEVEL=0'], {
          alert: 'protocol version',
          logCode: 'ERR_SSL_UNSUPPORTED_PROTOCOL',
        }),
      );
    }
    const weak = [
      ['NULL-SHA256', 'no encryption'],
      ['ADH-AES128-GCM-SHA256', 'anonymous, no server authentication'],
      ['AES128-GCM-SHA256', 'static RSA key exchange'],
      ['AES256-SHA256', 'static RSA, CBC'],
      ['ECDHE-RSA-AES128-SHA', 'CBC with SHA-1'],
      ['CAMELLIA128-SHA', 'static RSA, Camellia CBC'],
      ['DES-CBC3-SHA', '3DES'],
    ] as const;
    for (const [cipher, why] of weak) {
      out.push(
        await tlsCase(
          t,
          `weak cipher ${cipher}, ${why} (node:tls)`,
          { ...base, maxVersion: 'TLSv1.2', ciphers: `${cipher}@SECLEVEL=0` },
          { alert: HANDSHAKE_FAILURE_ALERT, logCode: 'ERR_SSL_NO_SHARED_CIPHER' },
        ),
      );
    }
    for (const cipher of ['NULL-SHA', 'DES-CBC3-SHA', 'RC4-SHA']) {
      out.push(
        await opensslCase(
          t,
          `weak cipher ${cipher} (openssl s_client)`,
          ['-tls1_2', '-cipher', `${cipher}@SECLEVEL=0`],
          { alert: 'handshake failure', logCode: 'ERR_SSL_NO_SHARED_CIPHER' },
        ),
      );
    }
    return out;
  }

  for (const kind of ['registry', 'node-controller'] as const) {
    it(`${kind} server: hostile clients are refused for the expected reason and logged; the right client is served`, async () => {
      const t = targets().find((x) => x.kind === kind)!;
      const h = await pki.hostile(t.clientIdentity);
      hostilePairs.push(h.wrongCa, h.expired, h.notYetValid, h.wrongSan);
      const campaign = new Campaign(t.title);
      for (const o of [...(await controls(t)), ...(await certificateCases(t, h)), ...(await protocolCases(t))])
        campaign.record(o);
      process.stdout.write(`\n${campaign.report()}\n`);
      expect(campaign.failures).toEqual([]);
      expect(campaign.outcomes.filter((o) => o.verdict === 'refused').length).toBeGreaterThanOrEqual(20);
      expect(await drivers.nodeAvailable()).toBe(true);
    });
  }

  it('the servers log every refusal (warn, peer, code, reason) and no key material', async () => {
    const keys = [pki.ca, pki.registry, pki.nodeController, pki.foreignCa, ...hostilePairs];
    const secrets = keys.flatMap(keyMaterialLines);
    const findings: string[] = [];
    const counts: string[] = [];
    for (const p of [drivers.controller, drivers.node]) {
      const text = p.log();
      const lines = await logLines(p.logFile);
      const refusals = lines.filter((l) => l.msg === REFUSED_HANDSHAKE || l.msg === REFUSED_CALL);
      const incomplete = refusals.filter(
        (l) =>
          l.level !== 'warn' ||
          typeof l.peer !== 'string' ||
          typeof l.code !== 'string' ||
          typeof l.reason !== 'string',
      );
      const suppressed = lines.filter((l) => l.msg === 'mutual TLS refusals not logged (too many)');
      const leaked = secrets.filter((k) => text.includes(k)).length + (text.includes('PRIVATE KEY') ? 1 : 0);
      counts.push(`${p.name} ${refusals.length} refusal lines of ${lines.length}`);
      if (refusals.length < 20) findings.push(`${p.name}: only ${refusals.length} refusal lines`);
      if (incomplete.length > 0)
        findings.push(`${p.name}: incomplete refusal lines ${JSON.stringify(incomplete.slice(0, 2))}`);
      if (suppressed.length > 0)
        findings.push(`${p.name}: refusals left out by the rate limit ${JSON.stringify(suppressed)}`);
      if (leaked > 0) findings.push(`${p.name}: ${leaked} lines of key material in the log`);
    }
    process.stdout.write(
      `\nmTLS refusal logs: ${counts.join(', ')}; ${secrets.length} key lines of ${keys.length} keys looked for: ${findings.length} failures\n${findings.map((f) => `  FAILED ${f}`).join('\n')}\n`,
    );
    expect(findings).toEqual([]);
  });

  it('certificate rotation under load: 0 failed calls, the node registered throughout', async () => {
    const stats = await rotateUnderLoad(dir, pki, drivers);
    const line =
      `mTLS rotation under load: ${stats.rotations.length} rotations (${stats.rotations.join(', ')}) of the controller's, the node's and the client's files; ` +
      `${stats.calls} calls on ${stats.connections} connections, ${stats.failures.length} failed; node unavailable in ${stats.unavailableSamples} of ${stats.samples} samples; ` +
      `new material taken up: controller ${stats.swaps.controller}, node ${stats.swaps.node}`;
    process.stdout.write(
      `\n${line}\n${stats.failures
        .slice(0, 5)
        .map((f) => `  FAILED ${f}`)
        .join('\n')}\n`,
    );
    expect(stats.failures).toEqual([]);
    expect(stats.calls).toBeGreaterThan(200);
    expect(stats.unavailableSamples).toBe(0);
    expect(stats.swaps.controller).toBeGreaterThanOrEqual(stats.rotations.length);
    expect(stats.swaps.node).toBeGreaterThanOrEqual(stats.rotations.length);
  });
});

interface RotationStats {
  readonly rotations: string[];
  calls: number;
  connections: number;
  readonly failures: string[];
  samples: number;
  unavailableSamples: number;
  swaps: { controller: number; node: number };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Rotate every party's files in four steps while 6 workers call both servers, each on fresh connections every 5 calls. */
async function rotateUnderLoad(dir: string, pki: CampaignPki, d: CampaignDrivers): Promise<RotationStats> {
  const clientFiles = {
    asNode: await writeTlsSet(
      join(dir, 'tls', 'load-as-node'),
      pki.ca.certPem,
      await leaf(pki.ca, NODE_CONTROLLER_SAN),
    ),
    asRegistry: await writeTlsSet(
      join(dir, 'tls', 'load-as-registry'),
      pki.ca.certPem,
      await leaf(pki.ca, REGISTRY_SAN),
    ),
  };
  const creds = {
    registry: await channelCredentials(clientFiles.asNode, { expectedServerName: REGISTRY_SAN, pollIntervalMs: 200 }),
    nodeController: await channelCredentials(clientFiles.asRegistry, {
      expectedServerName: NODE_CONTROLLER_SAN,
      pollIntervalMs: 200,
    }),
  };
  const stats: RotationStats = {
    rotations: [],
    calls: 0,
    connections: 0,
    failures: [],
    samples: 0,
    unavailableSamples: 0,
    swaps: { controller: 0, node: 0 },
  };
  const before = { controller: await swapsIn(d.controller.logFile), node: await swapsIn(d.node.logFile) };
  let running = true;
  // Own subchannel pools: every new client makes a new connection (a new handshake with the files of the moment).
  const options = { 'grpc.use_local_subchannel_pool': 1 };
  const call = async (
    what: string,
    fn: (deadline: Date, cb: (e: grpc.ServiceError | null) => void) => void,
    ok: (e: grpc.ServiceError | null) => boolean,
  ): Promise<void> => {
    const err = await new Promise<grpc.ServiceError | null>((resolve) => fn(new Date(Date.now() + 10_000), resolve));
    stats.calls++;
    if (!ok(err)) stats.failures.push(`${what}: ${err === null ? 'OK' : `${grpc.status[err.code]}: ${err.details}`}`);
  };
  const worker = async (): Promise<void> => {
    while (running) {
      const ctl = new (loadCsi().csi.v1.Controller)(`127.0.0.1:${d.nodeControllerPort}`, creds.nodeController, options);
      const reg = new (loadRegistry().pmemcsi.registry.v1.Registry)(
        `127.0.0.1:${d.registryPort}`,
        creds.registry,
        options,
      );
      stats.connections += 2;
      for (let i = 0; i < 5 && running; i++) {
        await call(
          'node-controller ControllerGetCapabilities',
          (deadline, cb) => ctl.ControllerGetCapabilities({}, { deadline }, cb),
          (e) => e === null,
        );
        // An unregistered node id: the registry's own answer (NOT_FOUND) proves the call got through TLS and the identity check.
        await call(
          'registry RenewController',
          (deadline, cb) =>
            reg.RenewController({ node_id: 'campaign-load', registration_id: 'none' }, { deadline }, cb),
          (e) => isServiceError(e) && e.code === grpc.status.NOT_FOUND,
        );
      }
      ctl.close();
      reg.close();
    }
  };
  const sampler = async (): Promise<void> => {
    while (running) {
      stats.samples++;
      if (!(await d.nodeAvailable().catch(() => false))) stats.unavailableSamples++;
      await sleep(500);
    }
  };
  const load = [...Array.from({ length: 6 }, () => worker()), sampler()];
  const all = (
    ca: string,
    leaves: {
      registry: CertificateAndKey;
      nodeController: CertificateAndKey;
      loadAsNode: CertificateAndKey;
      loadAsRegistry: CertificateAndKey;
    },
  ): Promise<unknown> =>
    Promise.all([
      writeTlsSet(join(dir, 'tls', 'controller'), ca, leaves.registry),
      writeTlsSet(join(dir, 'tls', 'node'), ca, leaves.nodeController),
      writeTlsSet(join(dir, 'tls', 'load-as-node'), ca, leaves.loadAsNode),
      writeTlsSet(join(dir, 'tls', 'load-as-registry'), ca, leaves.loadAsRegistry),
    ]);
  const leavesOf = async (
    ca: CertificateAndKey,
  ): Promise<{
    registry: CertificateAndKey;
    nodeController: CertificateAndKey;
    loadAsNode: CertificateAndKey;
    loadAsRegistry: CertificateAndKey;
  }> => {
    const [registry, nodeController, loadAsNode, loadAsRegistry] = await Promise.all([
      leaf(ca, REGISTRY_SAN),
      leaf(ca, NODE_CONTROLLER_SAN),
      leaf(ca, NODE_CONTROLLER_SAN),
      leaf(ca, REGISTRY_SAN),
    ]);
    return { registry, nodeController, loadAsNode, loadAsRegistry };
  };
  const [sameCa, secondCa] = [await leavesOf(pki.ca), await leavesOf(pki.ca2)];
  const bundle = `${pki.ca.certPem}${pki.ca2.certPem}`;
  const steps: Array<[string, () => Promise<unknown>]> = [
    ['new leaves of the same CA', () => all(pki.ca.certPem, sameCa)],
    ['a second CA trusted beside the first', () => all(bundle, sameCa)],
    ['leaves of the second CA', () => all(bundle, secondCa)],
    ['the first CA retired', () => all(pki.ca2.certPem, secondCa)],
  ];
  try {
    await sleep(1500);
    for (const [name, step] of steps) {
      await step();
      stats.rotations.push(name);
      // The drivers look at their files every second; give every party time to take the step.
      await sleep(2500);
    }
  } finally {
    running = false;
    await Promise.all(load);
  }
  stats.swaps = {
    controller: (await swapsIn(d.controller.logFile)) - before.controller,
    node: (await swapsIn(d.node.logFile)) - before.node,
  };
  return stats;
}

async function swapsIn(logFile: string): Promise<number> {
  return (await logLines(logFile)).filter((l) => l.msg === 'TLS files changed: new material in use').length;
}
