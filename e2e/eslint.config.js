// Lint of the e2e project: the workspace rules. ESLint matches `files` and `ignores` against the
// directory of the config file it found, and `nx lint e2e` runs from this directory, so the
// workspace's rule objects written for `e2e/**` (the harness may be longer, more branched and print
// to the console) are rebased here to `**`. Without that they never applied when e2e was linted.
import workspace from '../eslint.config.js';

const HERE = 'e2e/';
const rebase = (patterns) =>
  patterns?.map((p) => (typeof p === 'string' && p.startsWith(HERE) ? p.slice(HERE.length) : p));
const mentionsHere = (config) => (config.files ?? []).some((p) => typeof p === 'string' && p.startsWith(HERE));

export default workspace.map((config) =>
  mentionsHere(config)
    ? { ...config, files: rebase(config.files), ...(config.ignores ? { ignores: rebase(config.ignores) } : {}) }
    : config,
);
