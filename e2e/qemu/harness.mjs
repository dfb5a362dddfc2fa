#!/usr/bin/env node
// The real-PMEM test tier: builds (once, cached) the QEMU guest image, then per device mode boots
// the guest twice on the same two emulated 4 GiB NVDIMMs and the same state disk:
//   boot 1  blank NVDIMMs: the guest suite, packages/node/src/device/pmem.guest.test.ts, for the
//           mode (PMEM_CSI_GUEST_MODE=<mode>, PMEM_CSI_GUEST_BOOT=1), which
//           ends by leaving volumes with data,
//   boot 2  the same NVDIMMs after a power-off: the suite's reboot cases (PMEM_CSI_GUEST_BOOT=2),
//   then    "kata-from-<mode>": the Kata image file the guest's Kata case made on real LVM or direct
//           namespaces (data written through its runc-side publication; exported to the results)
//           booted as a VM's only NVDIMM, as the kata mode below does with an emulated-mode image.
// Mode "kata" (issue 26) boots once: the host makes, in emulated mode through the node's CSI
// services, a volume with kataContainers: "true" (CreateVolume, NodeStageVolume, NodePublishVolume)
// and writes data at its runc-side publication
// (packages/node/src/testing/kata-image-cli.ts make), the guest gets that image as its only NVDIMM
// the way Kata's runtime passes it and runs packages/node/src/kata/kata.guest.test.ts (fsdax
// device, mount -o dax checked, data read back, a write), and after power-off the host reads the
// guest's write back (kata-image-cli.ts check). The two host steps count as cases.
// Modes "cxl-lvm" and "cxl-direct" (issue 27) boot twice like lvm and direct, but under trixie's
// QEMU (e2e/qemu/cxl/run-cxl-guest.sh) with two blank 4 GiB CXL type-3 persistent devices instead
// of NVDIMMs, running packages/node/src/device/cxl.guest.test.ts: boot 1 the node assembles a pmem
// region per device and the mode's device, CSI, owner and contract cases run on them; boot 2, after
// the power-off, the node assembles them again at its start and the reboot cases check data and state.
// Brings the Jest JSON results back, writes a JUnit file, prints per-case and per-boot timings and
// closes with the line "qemu: N passed, N failed". Exit code 0 only when every boot ran its suite
// and nothing failed; a boot that timed out or produced no result counts as one failure, named.
//
// usage: node e2e/qemu/harness.mjs [--mode lvm|direct]... [--record] [--keep] [--work DIR]
//                                  [--timeout SECONDS] [--junit FILE]
//   --mode     device modes to run (default: lvm, direct, kata, cxl-lvm and cxl-direct)
//   --record   copy the ndctl/LVM outputs the guest recorded into
//              packages/node/src/device/__fixtures__/recorded/<mode>/ (with index.json)
//   --keep     keep the NVDIMM images (sparse, 4 GiB each) after a successful run
//   --work     work directory (default $PMEM_CSI_QEMU_WORK or <tmpdir>/pmem-csi-qemu/<time>)
//   --timeout  limit per boot in seconds (default 1500; boot 2 gets a third of it, at least 400)
//   --parallel how many device modes run at the same time, one single-vCPU guest each (default:
//              the number of CPUs, at most the number of modes); output lines carry the mode
//   --repo     the repository to share into the guest (default: this one), e.g. an overlay with
//              proposed changes to files this tier does not own
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, homedir, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const OWN_REPO = resolve(HERE, '../..');
let REPO = OWN_REPO;
const MODES = ['lvm', 'direct', 'kata', 'cxl-lvm', 'cxl-direct'];
/** The CXL modes (issue 27): the device mode on two CXL type-3 persistent devices under trixie's QEMU (e2e/qemu/CXL.md). */
const CXL_MODES = { 'cxl-lvm': 'lvm', 'cxl-direct': 'direct' };
const CACHE = process.env.PMEM_CSI_QEMU_CACHE ?? join(homedir(), '.cache', 'pmem-csi-qemu');

function parseArgs(argv) {
  const o = { modes: [], record: false, keep: false, work: undefined, timeout: 1500, junit: undefined, repo: undefined, parallel: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (argv[i + 1] === undefined) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--mode') o.modes.push(value());
    else if (a === '--record') o.record = true;
    else if (a === '--keep') o.keep = true;
    else if (a === '--work') o.work = resolve(value());
    else if (a === '--timeout') o.timeout = Number(value());
    else if (a === '--junit') o.junit = resolve(value());
    else if (a === '--repo') o.repo = resolve(value());
    else if (a === '--parallel') o.parallel = Number(value());
    else throw new Error(`unknown argument ${a} (see the usage at the top of e2e/qemu/harness.mjs)`);
  }
  if (o.modes.length === 0) o.modes = [...MODES];
  for (const m of o.modes) if (!MODES.includes(m)) throw new Error(`--mode ${m}: not one of ${MODES.join(', ')}`);
  if (!(o.timeout > 0)) throw new Error('--timeout must be a positive number of seconds');
  if (o.parallel !== undefined && !(Number.isInteger(o.parallel) && o.parallel >= 1)) throw new Error('--parallel must be an integer of at least 1');
  o.parallel ??= Math.max(1, Math.min(o.modes.length, availableParallelism()));
  return o;
}

const say = (msg) => process.stderr.write(`qemu-tier: ${msg}\n`);
const plain = (s) => String(s).replace(/\u001b\[[0-9;]*m/g, '');
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

function buildImage() {
  const t0 = Date.now();
  const res = spawnSync('bash', [join(HERE, 'build-image.sh')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`build-image.sh failed (exit ${res.status ?? res.signal})`);
  const dir = res.stdout.trim().split('\n').at(-1);
  return { dir, ms: Date.now() - t0 };
}

/** The guest's test file: one suite for the NVDIMM modes and one for the CXL modes, which read the mode from PMEM_CSI_GUEST_MODE; the Kata boot's own. */
function guestTestFile(mode) {
  const name = mode === 'kata' || mode.startsWith('kata-from-') ? 'packages/node/src/kata/kata.guest.test.ts'
    : mode in CXL_MODES ? 'packages/node/src/device/cxl.guest.test.ts'
      : 'packages/node/src/device/pmem.guest.test.ts';
  const file = join(REPO, name);
  if (!existsSync(file)) throw new Error(`no ${relative(REPO, file)}`);
  return relative(REPO, file);
}

/**
 * Run a command; its stdout and stderr go to ours line by line, each line prefixed (so that guests
 * running side by side stay readable). Resolves with the exit code (1 when killed by a signal).
 */
function runPrefixed(command, args, prefix) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const pipe = (from, to) => {
      let rest = '';
      from.setEncoding('utf8');
      from.on('data', (chunk) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) to.write(`${prefix}${line}\n`);
      });
      from.on('end', () => {
        if (rest !== '') to.write(`${prefix}${rest}\n`);
      });
    };
    pipe(child.stdout, process.stdout);
    pipe(child.stderr, process.stderr);
    child.on('error', reject);
    child.on('close', (code) => resolvePromise(code ?? 1));
  });
}

/** The PMEM (and state disk) of a mode's boots: two blank PMEM NVDIMMs, two blank CXL devices, or the Kata image alone. */
function devices(m) {
  if (m.kataImage !== undefined) return ['--kata-nvdimm', m.kataImage];
  if (m.mode in CXL_MODES) return ['--cxl', join(m.dir, 'cxl0.img'), '--cxl', join(m.dir, 'cxl1.img'), '--state-disk', join(m.dir, 'state.img')];
  return ['--nvdimm', join(m.dir, 'nvdimm0.img'), '--nvdimm', join(m.dir, 'nvdimm1.img'), '--state-disk', join(m.dir, 'state.img')];
}

async function boot(image, m, n, timeoutS, prefix) {
  const jsonName = `jest-${m.mode}-boot${n}.json`;
  rmSync(join(m.results, jsonName), { force: true });
  const cxl = CXL_MODES[m.mode];
  // A CXL guest first loads the CXL drivers (guest-test.sh), then runs the same Jest command.
  const command = cxl !== undefined ? ['sh', 'e2e/qemu/cxl/guest-test.sh', jsonName] : [
    'node', '--experimental-vm-modules', '--no-warnings=ExperimentalWarning', 'node_modules/jest/bin/jest.js',
    '--config', 'e2e/qemu/jest.guest.config.js', '--ci', '--forceExit', '--json', `--outputFile=/results/${jsonName}`,
    m.testFile,
  ];
  const guestMode = m.kataImage !== undefined ? 'kata' : (cxl ?? m.mode);
  const args = [
    join(HERE, cxl !== undefined ? 'cxl/run-cxl-guest.sh' : 'run-guest.sh'), '--repo', REPO, '--image', image, '--results', m.results, '--name', `${m.mode}-boot${n}`, '--timeout', String(timeoutS),
    ...devices(m),
    '--cache', join(CACHE, 'guest-cache'),
    '--env', `PMEM_CSI_GUEST_MODE=${guestMode}`, '--env', `PMEM_CSI_GUEST_BOOT=${n}`, '--env', 'PMEM_CSI_GUEST_RESULTS=/results',
    ...(cxl !== undefined ? ['--env', 'PMEM_CSI_GUEST_PMEM=cxl'] : []), '--', ...command,
  ];
  say(`${m.mode} boot ${n}: ${m.testFile} with PMEM_CSI_GUEST_MODE=${guestMode}${cxl !== undefined ? ' on CXL' : ''} (limit ${timeoutS} s)`);
  const t0 = Date.now();
  const code = await runPrefixed('bash', args, prefix ? `[${m.mode}] ` : '');
  const ms = Date.now() - t0;
  const jsonPath = join(m.results, jsonName);
  const json = existsSync(jsonPath) ? JSON.parse(readFileSync(jsonPath, 'utf8')) : undefined;
  const problem = code === 124 ? `boot ${n} of ${m.mode} timed out after ${timeoutS} s (see console-${m.mode}-boot${n}.log)`
    : json === undefined ? `boot ${n} of ${m.mode} produced no Jest result (exit ${code}; see console-${m.mode}-boot${n}.log)`
      : undefined;
  return { mode: m.mode, n, ms, code, json, problem, timings: guestTimings(m.results, `${m.mode}-boot${n}`) };
}

/** Guest uptimes (s) at init, udev ready, command start and end, written by guest/init.sh. */
function guestTimings(results, name) {
  const p = join(results, `guest-timings-${name}`);
  if (!existsSync(p)) return {};
  return Object.fromEntries(readFileSync(p, 'utf8').trim().split('\n').map((l) => l.split(' ')).map(([k, v]) => [k, Number(v)]));
}

/**
 * A host step of the Kata boot (kata-image-cli.ts make|check), as root on this machine with the
 * repository's sources; one case named after it, its output line as the failure.
 */
function kataHostStep(m, name, args, prefix) {
  const t0 = Date.now();
  const res = spawnSync('node', ['--conditions=@pmem-csi/source', '--import', 'tsx', 'packages/node/src/testing/kata-image-cli.ts', ...args], {
    cwd: REPO, encoding: 'utf8', timeout: 300_000,
  });
  const out = `${res.stdout ?? ''}${res.stderr ?? ''}`.trim();
  for (const line of out.split('\n')) if (line !== '') process.stdout.write(`${prefix ? '[kata] ' : ''}${line}\n`);
  const ok = res.status === 0 && /^kata-image: ok/m.test(out);
  return { name: `kata host › ${name}`, status: ok ? 'passed' : 'failed', ms: Date.now() - t0, failure: ok ? '' : out || `exit ${res.status ?? res.signal}` };
}

/** One boot with the Kata image `m.kataImage` (facts in <image>.json) as the only NVDIMM, then the guest's write read back on the host. */
async function kataBoot(image, m, timeoutS, prefix) {
  copyFileSync(`${m.kataImage}.json`, join(m.results, 'kata-image.json'));
  const b = await boot(image, m, 1, timeoutS, prefix);
  const guestJson = join(m.results, 'kata-guest.json');
  const name = `${m.mode} host › the guest's write reads back on the host after power-off`;
  const checked = existsSync(guestJson)
    ? { ...kataHostStep(m, '', ['check', m.kataImage, guestJson], prefix), name }
    : { name, status: 'failed', ms: 0, failure: 'the guest wrote no kata-guest.json' };
  return { boot: b, checked };
}

/** The Kata mode: make the image on the host in emulated mode, one boot with it as the NVDIMM, read the guest's write back. */
async function kataMode(image, m, timeoutS, prefix) {
  const made = kataHostStep(m, 'a kataContainers volume made through CSI in emulated mode, data written at its runc-side publication', ['make', m.kataImage], prefix);
  if (made.status !== 'passed') return { boots: [], host: [made] };
  const k = await kataBoot(image, m, timeoutS, prefix);
  return { boots: [k.boot], host: [made, k.checked] };
}

/**
 * After an NVDIMM mode's boots: the Kata image its guest made on real LVM or direct namespaces
 * (guest-kata-csi.ts exports it to the results as kata-from-guest.img) booted as a VM's NVDIMM —
 * mode "kata-from-<mode>". A missing export is a failed case: the guest's Kata case did not get there.
 */
async function kataFromGuest(image, m, timeoutS, prefix) {
  const exported = join(m.results, 'kata-from-guest.img');
  const mode = `kata-from-${m.mode}`;
  if (!existsSync(exported) || !existsSync(`${exported}.json`))
    return { boots: [], host: [{ name: `${mode} host › the guest exported its Kata image`, status: 'failed', ms: 0, failure: `no ${exported} (and .json): the ${m.mode} guest's Kata case did not export its image` }] };
  const img = join(m.dir, 'kata.img');
  renameSync(exported, img);
  renameSync(`${exported}.json`, `${img}.json`);
  const k = { mode, dir: m.dir, results: join(m.dir, 'kata-results'), testFile: guestTestFile('kata'), kataImage: img };
  mkdirSync(k.results, { recursive: true });
  const b = await kataBoot(image, k, timeoutS, prefix);
  return { boots: [b.boot], host: [b.checked] };
}

function cases(b) {
  if (b.json === undefined) return [];
  return b.json.testResults.flatMap((file) => {
    const suiteError = file.status === 'failed' && file.assertionResults.length === 0 ? file.message : undefined;
    const list = file.assertionResults.map((t) => ({
      name: `${b.mode} boot ${b.n} › ${t.fullName}`, status: t.status, ms: t.duration ?? 0, failure: plain((t.failureMessages ?? []).join('\n')),
    }));
    if (suiteError !== undefined) list.push({ name: `${b.mode} boot ${b.n} › ${relative(REPO, file.name)} (suite failed to run)`, status: 'failed', ms: 0, failure: plain(suiteError) });
    return list;
  });
}

const xml = (s) => String(s).replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]).replace(/\u001b\[[0-9;]*m/g, '');

function junit(boots, all) {
  const suites = boots.map((b) => {
    const list = all.filter((c) => c.name.startsWith(`${b.mode} boot ${b.n} ›`));
    const body = list.map((c) => `    <testcase classname="qemu.${b.mode}.boot${b.n}" name="${xml(c.name)}" time="${(c.ms / 1000).toFixed(3)}">${
      c.status === 'failed' ? `<failure message="${xml(c.failure.split('\n')[0])}">${xml(c.failure)}</failure>` : ''}</testcase>`);
    const failures = list.filter((c) => c.status === 'failed').length;
    return `  <testsuite name="qemu ${b.mode} boot ${b.n}" tests="${list.length}" failures="${failures}" time="${(b.ms / 1000).toFixed(1)}">\n${body.join('\n')}\n  </testsuite>`;
  });
  const host = all.filter((c) => c.name.startsWith('kata host ›'));
  if (host.length > 0) {
    const body = host.map((c) => `    <testcase classname="qemu.kata.host" name="${xml(c.name)}" time="${(c.ms / 1000).toFixed(3)}">${
      c.status === 'failed' ? `<failure message="${xml(c.failure.split('\n')[0])}">${xml(c.failure)}</failure>` : ''}</testcase>`);
    suites.push(`  <testsuite name="qemu kata host" tests="${host.length}" failures="${host.filter((c) => c.status === 'failed').length}">\n${body.join('\n')}\n  </testsuite>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="qemu">\n${suites.join('\n')}\n</testsuites>\n`;
}

function copyRecorded(m, image) {
  const from = join(m.results, 'recorded');
  if (!existsSync(from)) return 0;
  const to = join(OWN_REPO, 'packages/node/src/device/__fixtures__/recorded', m.mode);
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  const commands = {};
  for (const line of readFileSync(join(from, 'commands.tsv'), 'utf8').trim().split('\n')) {
    const [file, command] = line.split('\t');
    commands[file] = command;
  }
  const files = readdirSync(from).filter((f) => f.endsWith('.json')).sort();
  for (const f of files) copyFileSync(join(from, f), join(to, f));
  const versions = Object.fromEntries(readFileSync(join(image, 'versions.env'), 'utf8').trim().split('\n').map((l) => l.split('=')));
  writeFileSync(join(to, 'index.json'), `${JSON.stringify({ recordedWith: versions, files: Object.fromEntries(files.map((f) => [f, commands[f]])) }, null, 2)}\n`);
  return files.length;
}

function toolSummary(results) {
  const totals = new Map();
  for (const f of readdirSync(results).filter((n) => n.startsWith('tool-timings-'))) {
    for (const c of JSON.parse(readFileSync(join(results, f), 'utf8'))) {
      const t = totals.get(c.command) ?? { n: 0, ms: 0, max: 0 };
      totals.set(c.command, { n: t.n + 1, ms: t.ms + c.ms, max: Math.max(t.max, c.ms) });
    }
  }
  return [...totals.entries()].sort((a, b) => b[1].ms - a[1].ms);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.repo !== undefined) REPO = o.repo;
  const t0 = Date.now();
  const image = buildImage();
  say(`image ${image.dir} ready in ${secs(image.ms)}`);
  const work = o.work ?? process.env.PMEM_CSI_QEMU_WORK ?? join(tmpdir(), 'pmem-csi-qemu', new Date().toISOString().replace(/[:.]/g, '-'));
  mkdirSync(work, { recursive: true });
  say(`work directory ${work}`);
  const modes = o.modes.map((mode) => {
    const dir = join(work, mode);
    rmSync(dir, { recursive: true, force: true }); // blank NVDIMMs and state disk for boot 1
    const m = { mode, dir, results: join(dir, 'results'), testFile: guestTestFile(mode), ...(mode === 'kata' ? { kataImage: join(dir, 'kata.img') } : {}) };
    mkdirSync(m.results, { recursive: true });
    return m;
  });
  // Each mode boots twice in order (boot 2 needs boot 1's NVDIMMs); modes run side by side.
  const prefix = o.parallel > 1;
  if (prefix) say(`running ${o.modes.join(', ')} side by side (--parallel ${o.parallel}); lines carry the mode`);
  const perMode = new Map();
  const queue = [...modes];
  const worker = async () => {
    for (let m = queue.shift(); m !== undefined; m = queue.shift()) {
      if (m.mode === 'kata') {
        perMode.set(m.mode, await kataMode(image.dir, m, Math.min(o.timeout, 900), prefix));
        continue;
      }
      const first = await boot(image.dir, m, 1, o.timeout, prefix);
      const second = await boot(image.dir, m, 2, Math.max(400, Math.round(o.timeout / 3)), prefix);
      // The NVDIMM modes' Kata image (made on real LVM / direct namespaces in boot 1) as a VM's NVDIMM.
      const kata = m.mode in CXL_MODES ? { boots: [], host: [] } : await kataFromGuest(image.dir, m, Math.min(o.timeout, 900), prefix);
      perMode.set(m.mode, { boots: [first, second, ...kata.boots], host: kata.host });
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.parallel, modes.length) }, worker));
  const boots = modes.flatMap((m) => perMode.get(m.mode).boots);

  const all = [...boots.flatMap(cases), ...modes.flatMap((m) => perMode.get(m.mode).host)];
  for (const b of boots) if (b.problem !== undefined) all.push({ name: `${b.mode} boot ${b.n}`, status: 'failed', ms: b.ms, failure: b.problem });
  const passed = all.filter((c) => c.status === 'passed').length;
  const failed = all.filter((c) => c.status === 'failed').length;
  const junitPath = o.junit ?? join(work, 'junit.xml');
  writeFileSync(junitPath, junit(boots, all));

  const out = [];
  out.push('', 'per case (guest wall time):');
  for (const c of all) out.push(`  ${c.status === 'passed' ? 'ok  ' : c.status === 'failed' ? 'FAIL' : c.status.padEnd(4)} ${secs(c.ms).padStart(8)}  ${c.name}`);
  out.push('', 'per boot:');
  for (const b of boots) {
    const t = b.timings;
    const bootS = t['command-start'] !== undefined ? `${t['command-start'].toFixed(1)} s kernel+init to the test command` : 'guest did not reach the test command';
    const cmdS = t['command-end'] !== undefined ? `, ${(t['command-end'] - t['command-start']).toFixed(1)} s command` : '';
    const jest = b.json ? `, ${b.json.numPassedTests} passed / ${b.json.numFailedTests} failed` : '';
    out.push(`  ${b.mode} boot ${b.n}: ${secs(b.ms)} wall (QEMU start to exit); ${bootS}${cmdS}${jest}${b.problem ? ` — ${b.problem}` : ''}`);
  }
  for (const m of modes) {
    const tools = toolSummary(m.results);
    if (tools.length === 0) continue;
    out.push('', `tool calls in the guest, ${m.mode} mode (count, total, average, max):`);
    for (const [cmd, t] of tools.slice(0, 14)) out.push(`  ${cmd.padEnd(28)} ${String(t.n).padStart(4)}  ${secs(t.ms).padStart(8)}  ${secs(t.ms / t.n).padStart(7)}  ${secs(t.max).padStart(7)}`);
  }
  for (const c of all.filter((x) => x.status === 'failed')) out.push('', `FAILED: ${c.name}`, c.failure.split('\n').slice(0, 25).join('\n'));
  if (o.record) {
    for (const m of modes) out.push(`recorded ${copyRecorded(m, image.dir)} tool outputs into packages/node/src/device/__fixtures__/recorded/${m.mode}/`);
  }
  out.push('', `image ${secs(image.ms)}; total ${secs(Date.now() - t0)}; JUnit ${junitPath}; logs in ${work}/<mode>/results/`);
  process.stdout.write(`${out.join('\n')}\n`);

  const ok = failed === 0 && passed > 0;
  if (ok && !o.keep) for (const m of modes) for (const f of ['nvdimm0.img', 'nvdimm1.img', 'state.img', 'kata.img', 'cxl0.img', 'cxl0.img.lsa', 'cxl1.img', 'cxl1.img.lsa']) rmSync(join(m.dir, f), { force: true });
  process.stdout.write(`\nqemu: ${passed} passed, ${failed} failed\n`);
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  process.stderr.write(`qemu-tier: ${e instanceof Error ? e.message : String(e)}\n`);
  process.stdout.write('\nqemu: 0 passed, 1 failed\n');
  process.exit(1);
});
