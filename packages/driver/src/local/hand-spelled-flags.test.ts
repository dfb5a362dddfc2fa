// Harnesses that start pmem-csi-driver (the local stack here, the cluster, security and bench
// harnesses in e2e/src) render its flags with renderDriverArgs from @pmem-csi/csi, whose schema
// (DRIVER_FLAGS) the driver's parser is built from: a renamed flag then breaks compilation (the
// configuration key is gone) instead of a harness at run time. This test fails when a string in
// those directories spells a driver flag by hand (`'--nodeid'`, `'--lease-seconds=6'`, `--v ...`).
// Comments are not read (they may name flags); the few strings that are another program's flag of
// the same name (or quote a command line) are listed in OTHER_PROGRAMS, each with whose it is.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DRIVER_FLAGS } from '@pmem-csi/csi';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SCANNED = ['e2e/src', 'packages/driver/src/local'];

const THIS_FILE = 'packages/driver/src/local/hand-spelled-flags.test.ts';
const LOCAL_STATE_DIR = "the local subcommand's --state-dir (pmem-csi-driver local)";
const KLOG_V = "external-provisioner's --v (klog verbosity)";

/** Strings that spell another program's flag of the same name (or quote a command line), by file. */
const OTHER_PROGRAMS: ReadonlyArray<{
  readonly file: string;
  readonly texts: readonly string[];
  readonly why: string;
}> = [
  { file: 'e2e/src/cluster/components.ts', texts: ['--v=3'], why: KLOG_V },
  { file: 'e2e/src/cluster/controller-failover.test.ts', texts: ['--v=3'], why: KLOG_V },
  { file: 'e2e/src/deploy/helm.test.ts', texts: ['--log-format=json'], why: "the operator's --log-format" },
  {
    file: 'e2e/src/leaks/diff.test.ts',
    texts: [
      'pmem-csi-driver --mode node (older)',
      'pmem-csi-driver --mode node',
      'node packages/driver/src/main.ts --mode controller',
      'pid 2002 (parent 1000): node packages/driver/src/main.ts --mode controller',
    ],
    why: 'command lines of leaked processes, as a leak report prints them',
  },
  { file: 'e2e/src/release/chart.ts', texts: ['--ca-file'], why: "helm's --ca-file (the registry's CA)" },
  { file: 'packages/driver/src/local/hints.ts', texts: [' --state-dir '], why: LOCAL_STATE_DIR },
  {
    file: 'packages/driver/src/local/hints.test.ts',
    texts: [
      'npm start -- --keep --fake --state-dir run/one',
      "npm start -- --keep --state-dir '/tmp/my stack'\\''s dir'",
    ],
    why: LOCAL_STATE_DIR,
  },
  { file: 'packages/driver/src/local/local-signals.test.ts', texts: ['--state-dir'], why: LOCAL_STATE_DIR },
  {
    file: 'packages/driver/src/local/lock.ts',
    texts: ['), or give this one another directory with --state-dir DIR'],
    why: LOCAL_STATE_DIR,
  },
  {
    file: 'packages/driver/src/local/lock.test.ts',
    texts: ['), or give this one another directory with --state-dir DIR'],
    why: LOCAL_STATE_DIR,
  },
];

/** Every driver flag spelling: --name and the legacy names. */
const SPELLINGS = DRIVER_FLAGS.flatMap((f) => [f.name, ...(f.legacyNames ?? [])]);
const HAND_SPELLED = new RegExp(`(?:^|\\s)--(${SPELLINGS.map((s) => s.replace(/-/g, '\\-')).join('|')})(?=$|[=\\s])`);

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : tsFiles(path);
    return e.name.endsWith('.ts') && path !== THIS_FILE ? [path] : [];
  });
}

/** The text of every string literal and template piece of TypeScript source (no comments). */
function stringsIn(name: string, text: string): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) out.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

const stringsOf = (file: string): string[] => stringsIn(file, readFileSync(join(ROOT, file), 'utf8'));

/** `file: "text"` for each string that spells a driver flag and is not another program's. */
function handSpelledFlags(files: readonly string[]): string[] {
  return files.flatMap((file) =>
    stringsOf(file)
      .filter((text) => HAND_SPELLED.test(text))
      .filter((text) => !OTHER_PROGRAMS.some((o) => o.file === file && o.texts.includes(text)))
      .map((text) => `${file}: ${JSON.stringify(text)}`),
  );
}

describe('driver flags are rendered from DRIVER_FLAGS, not spelled by hand', () => {
  const files = SCANNED.flatMap(tsFiles);

  it('scans the harnesses (the local stack, the cluster, security and bench harnesses)', () => {
    for (const harness of [
      'packages/driver/src/local/stack.ts',
      'e2e/src/cluster/controller-failover.test.ts',
      'e2e/src/cluster/metrics.test.ts',
      'e2e/src/security/drivers.ts',
      'e2e/src/bench/setup.ts',
    ])
      expect(files).toContain(harness);
  });

  it('no string in e2e/src or packages/driver/src/local spells a driver flag', () => {
    expect(handSpelledFlags(files)).toEqual([]);
  });

  it('each exception is still in its file (no stale entry hides a new hand-spelled flag)', () => {
    const stale = OTHER_PROGRAMS.flatMap((o) => {
      const strings = stringsOf(o.file);
      return o.texts.filter((t) => !strings.includes(t)).map((t) => `${o.file}: ${JSON.stringify(t)}`);
    });
    expect(stale).toEqual([]);
  });

  it('reads strings and template pieces, not comments', () => {
    const source = [
      '// the driver runs with --nodeid and --lease-seconds (a comment may name flags)',
      "const args = ['--nodeid', id, '--lease-seconds', '6', `--registry-listen=${host}:${port}`, '--keep'];",
    ].join('\n');
    expect(stringsIn('old-stack.ts', source).filter((t) => HAND_SPELLED.test(t))).toEqual([
      '--nodeid',
      '--lease-seconds',
      '--registry-listen=',
    ]);
  });

  it('finds a flag spelled alone, with a value, and inside a command line', () => {
    expect(HAND_SPELLED.test('--nodeid')).toBe(true);
    expect(HAND_SPELLED.test('--lease-seconds=6')).toBe(true);
    expect(HAND_SPELLED.test('node main.ts --mode controller')).toBe(true);
    expect(HAND_SPELLED.test('--deviceMode=lvm')).toBe(true);
    expect(HAND_SPELLED.test('--v')).toBe(true);
    expect(HAND_SPELLED.test('--verbose')).toBe(false);
    expect(HAND_SPELLED.test('--modes')).toBe(false);
    expect(HAND_SPELLED.test('x--nodeid')).toBe(false);
  });
});
