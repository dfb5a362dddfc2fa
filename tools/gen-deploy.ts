// Generates the install manifests under deploy/ from the operator's own builders, so that the
// operator, the kustomize bases and the Helm chart cannot drift apart (the Go driver's hand-kept
// YAML did):
//   deploy/kustomize/{crd,driver-namespace,operator}/      kustomize bases
//   deploy/kustomize/driver/<mode>/<profile>/              the driver without the operator
//   deploy/kubernetes/<variant>/pmem-csi.yaml              `kustomize build` of each base, committed
//   deploy/helm/pmem-csi/crds/, values.schema.json, templates/_operator-rules.tpl
// Usage: npx tsx tools/gen-deploy.ts           write them (and remove stale generated files)
//        npx tsx tools/gen-deploy.ts --check   exit 1 naming every stale, missing or extra file
//        ... --root DIR                        read/write under DIR instead of the workspace (tests)
// The CRD copies come from the same source as deploy/crd (tools/gen-crd.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCE_CONDITION = '--conditions=@pmem-csi/source';

// The operator's sources import @pmem-csi/api by package name. Without the @pmem-csi/source
// export condition Node resolves that to the built dist/, which may be stale (or absent in a
// fresh clone) and would silently generate from old code: run again with the condition.
function needsSourceCondition(): boolean {
  return !import.meta.resolve('@pmem-csi/api').endsWith('/src/index.ts');
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map((f) => join(dir, String(f)))
    .filter((f) => statSync(f).isFile());
}

async function main(check: boolean, root: string): Promise<number> {
  const { renderCrdYaml } = await import('./gen-crd.js');
  const { GENERATED_DIRS, renderDeployFiles } = await import('../packages/operator/src/render/files.js');
  const files = renderDeployFiles({ crdYaml: renderCrdYaml() });
  const extra = GENERATED_DIRS.flatMap((dir) => listFiles(join(root, dir)))
    .map((f) => relative(root, f))
    .filter((f) => !files.has(f))
    .sort();
  if (check) {
    const stale: string[] = [];
    for (const [file, content] of files) {
      const committed = await readFile(join(root, file), 'utf8').catch(() => undefined);
      if (committed !== content) stale.push(committed === undefined ? `${file} (missing)` : file);
    }
    stale.push(...extra.map((f) => `${f} (not generated any more)`));
    if (stale.length > 0) {
      process.stderr.write(
        `gen-deploy: stale generated file(s):\n  ${stale.join('\n  ')}\n  regenerate with: npx tsx tools/gen-deploy.ts\n`,
      );
      return 1;
    }
    process.stdout.write(`gen-deploy: ${files.size} generated files are up to date\n`);
    return 0;
  }
  for (const [file, content] of files) {
    await mkdir(dirname(join(root, file)), { recursive: true });
    await writeFile(join(root, file), content);
  }
  for (const file of extra) await rm(join(root, file));
  process.stdout.write(
    `gen-deploy: wrote ${files.size} files${extra.length > 0 ? `, removed ${extra.join(', ')}` : ''}\n`,
  );
  return 0;
}

function parseArgs(args: readonly string[]): { check: boolean; root: string } | undefined {
  let check = false;
  let root = ROOT;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--check') check = true;
    else if (args[i] === '--root' && args[i + 1] !== undefined) root = args[++i] ?? ROOT;
    else return undefined;
  }
  return { check, root };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const options = parseArgs(process.argv.slice(2));
  if (options === undefined) {
    process.stderr.write('usage: npx tsx tools/gen-deploy.ts [--check] [--root DIR]\n');
    process.exitCode = 2;
  } else if (needsSourceCondition()) {
    const again = spawnSync(
      process.execPath,
      [SOURCE_CONDITION, ...process.execArgv, process.argv[1], ...process.argv.slice(2)],
      { stdio: 'inherit' },
    );
    process.exitCode = again.status ?? 1;
  } else {
    process.exitCode = await main(options.check, options.root);
  }
}
