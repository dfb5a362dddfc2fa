// What the README's generated blocks share (tools/gen-perf.ts: the Performance table from the
// bench's committed result; tools/gen-ci-times.ts: the CI times from .ci/run's committed phases):
// the text between a block's two marker lines replaced, and a committed JSON result read by its
// version. Each generator keeps its own markers, result type and error class.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** README.md lacks a block's markers, or has them more than once or out of order. */
export class ReadmeMarkersError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReadmeMarkersError';
  }
}

export interface BlockMarkers {
  /** The file, for messages. */
  readonly file: string;
  readonly begin: string;
  readonly end: string;
}

/** `text` with what lies between the markers replaced by `block`. */
export function spliceBlock(text: string, block: string, m: BlockMarkers): string {
  const begin = text.split(m.begin).length - 1;
  const end = text.split(m.end).length - 1;
  const from = text.indexOf(m.begin);
  const to = text.indexOf(m.end);
  if (begin !== 1 || end !== 1 || to < from)
    throw new ReadmeMarkersError(
      `${m.file} must hold the line ${m.begin} once, followed by ${m.end} once ` +
        `(found ${begin} and ${end}${begin === 1 && end === 1 ? ', in the wrong order' : ''})`,
    );
  return `${text.slice(0, from + m.begin.length)}\n${block}\n${text.slice(to)}`;
}

/**
 * The committed result `file` under `root`, or undefined when there is none; `fail` makes the
 * generator's own error for a file that is not JSON or not of `version` (`writer` says what writes it).
 */
export async function readVersionedResult(
  root: string,
  file: string,
  o: { readonly version: number; readonly writer: string; readonly fail: (message: string) => Error },
): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(join(root, file), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw o.fail(`${file}: not JSON: ${(e as Error).message}`);
  }
  const version = (value as { version?: unknown } | null)?.version;
  if (version !== o.version)
    throw o.fail(
      `${file}: version is ${JSON.stringify(version)}, this generator reads version ${o.version} (write it with ${o.writer})`,
    );
  return value;
}
