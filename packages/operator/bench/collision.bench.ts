// Two PmemCSIDeployments whose object names collide (issue 18: `pmem-csi.intel.com` and
// `pmem-csi-intel-com` both map to the prefix `pmem-csi-intel-com`), reconciled in turns against
// the in-memory apiserver with real certificates. Prints what the newer one's arrival costs the
// running one: object writes (apply/patch/delete) after it appeared, how often the node DaemonSet
// got a new UID (= all node pods recreated), how many CAs were generated, and both phase sequences.
// Run: node --conditions=@pmem-csi/source --import tsx packages/operator/bench/collision.bench.ts [rounds]
//      (default 6; one round = one reconcile of each deployment)
import { performance } from 'node:perf_hooks';
import { deploymentObjectNames, getCondition } from '@pmem-csi/api';
import { errorMessage } from '@pmem-csi/csi';
import { CR_NAME, harness, type Harness } from '../src/testing/harness.js';

const ROUNDS = Number(process.argv[2] ?? 6);
const OTHER = 'pmem-csi-intel-com';
const NAMES = deploymentObjectNames(CR_NAME);
const out = (line: string): void => void process.stdout.write(`${line}\n`);

/** What the apiserver looked like after each reconcile. */
class Observations {
  readonly phases: Record<string, string[]> = { [CR_NAME]: [], [OTHER]: [] };
  readonly daemonSetUids = new Set<string | undefined>();
  readonly cas = new Set<string | undefined>();
  daemonSetChanges = 0;
  failures = 0;

  readonly #h: Harness;

  constructor(h: Harness) {
    this.#h = h;
    this.#look(CR_NAME, undefined);
  }

  daemonSetUid(): string | undefined {
    return this.#h.object('daemonSet', NAMES.nodeDaemonSet)?.metadata.uid;
  }

  async reconcile(name: string): Promise<void> {
    const uid = this.daemonSetUid();
    try {
      await this.#h.reconciler().reconcile(name);
    } catch (e) {
      this.failures++;
      out(`  reconcile ${name} failed: ${errorMessage(e)}`);
    }
    this.#look(name, uid);
  }

  #look(name: string, uidBefore: string | undefined): void {
    const uid = this.daemonSetUid();
    if (uidBefore !== undefined && uid !== uidBefore) this.daemonSetChanges++;
    this.daemonSetUids.add(uid);
    this.cas.add(
      (this.#h.object('secret', NAMES.caSecret) as { data?: Record<string, string> } | undefined)?.data?.['ca.crt'],
    );
    const status = this.#h.cr(name).status;
    const conflict = getCondition(status?.conditions, 'Conflict')?.status === 'True' ? '(Conflict)' : '';
    this.phases[name]?.push(`${status?.phase || '""'}${conflict}`);
  }
}

function report(h: Harness, seen: Observations, writes: readonly string[], ms: number): void {
  const objectWrites = writes.filter((w) => !w.startsWith('status '));
  const kinds = new Map<string, number>();
  for (const w of objectWrites) {
    const key = w.split(' ').slice(0, 2).join(' ');
    kinds.set(key, (kinds.get(key) ?? 0) + 1);
  }
  out(`collision bench: ${ROUNDS} rounds (each: reconcile ${OTHER}, then ${CR_NAME}), ${ms.toFixed(0)} ms`);
  out(
    `  object writes after ${OTHER} appeared: ${objectWrites.length} (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'})`,
  );
  out(`  status writes: ${writes.length - objectWrites.length}; failed reconciles: ${seen.failures}`);
  out(`  node DaemonSet UID changes: ${seen.daemonSetChanges} (${seen.daemonSetUids.size} distinct UIDs)`);
  out(`  CA certificates seen in ${NAMES.caSecret}: ${seen.cas.size}`);
  out(
    `  DaemonSet ${NAMES.nodeDaemonSet} belongs to: ${h.object('daemonSet', NAMES.nodeDaemonSet)?.metadata.labels?.['app.kubernetes.io/instance'] ?? '-'}`,
  );
  for (const [name, sequence] of Object.entries(seen.phases)) out(`  phases ${name}: ${sequence.join(' ')}`);
}

async function main(): Promise<void> {
  const h = harness();
  h.putCr({}, CR_NAME);
  await h.reconciler().reconcile(CR_NAME);
  h.workloadsReady();
  await h.reconciler().reconcile(CR_NAME);
  const seen = new Observations(h);
  const before = h.kube.writes.length;
  h.putCr({}, OTHER);
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    await seen.reconcile(OTHER);
    await seen.reconcile(CR_NAME);
  }
  report(h, seen, h.kube.writes.slice(before), performance.now() - started);
}

await main();
