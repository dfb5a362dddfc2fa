// Lint of @pmem-csi/csi: the workspace rules. ESLint matches `files` and `ignores` against the
// directory of the config file it found, and `nx lint csi` runs from this directory, so the
// workspace's rule objects written for `packages/csi/src/**` are rebased here to `src/**`. Without
// that the purity rule (no Node built-ins with I/O) never applied when the package was linted.
import workspace from '../../eslint.config.js';

const HERE = 'packages/csi/';
const rebase = (patterns) =>
  patterns?.map((p) => (typeof p === 'string' && p.startsWith(HERE) ? p.slice(HERE.length) : p));
const mentionsHere = (config) => (config.files ?? []).some((p) => typeof p === 'string' && p.startsWith(HERE));

export default workspace.map((config) =>
  mentionsHere(config) ? { ...config, files: rebase(config.files), ignores: rebase(config.ignores) } : config,
);
