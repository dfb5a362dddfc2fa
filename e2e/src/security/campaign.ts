// Bookkeeping of a security campaign: each case is tried, judged against what it expects, and
// counted; the summary line says what was tried, refused as expected, accepted as expected (the
// controls), not offered (a client that cannot even produce the request — never counted as
// refused) and what failed.
import { readFile } from 'node:fs/promises';

export interface CaseOutcome {
  readonly name: string;
  /** 'refused' and 'accepted' are as expected; 'failed' is not; 'not offered' was never tried. */
  readonly verdict: 'refused' | 'accepted' | 'failed' | 'not offered';
  readonly detail: string;
}

export class Campaign {
  readonly outcomes: CaseOutcome[] = [];

  constructor(readonly title: string) {}

  record(outcome: CaseOutcome): void {
    this.outcomes.push(outcome);
  }

  get failures(): CaseOutcome[] {
    return this.outcomes.filter((o) => o.verdict === 'failed');
  }

  summary(): string {
    const n = (v: CaseOutcome['verdict']): number => this.outcomes.filter((o) => o.verdict === v).length;
    const tried = this.outcomes.length - n('not offered');
    const extra =
      n('not offered') > 0
        ? `, ${n('not offered')} not offered by the client (${this.outcomes
            .filter((o) => o.verdict === 'not offered')
            .map((o) => o.name)
            .join(', ')})`
        : '';
    return `${this.title}: ${tried} cases tried, ${n('refused')} refused as expected, ${n('accepted')} accepted as expected (controls), ${n('failed')} failures${extra}`;
  }

  /** The summary line, then one line per failure. */
  report(): string {
    return [this.summary(), ...this.failures.map((f) => `  FAILED ${f.name}: ${f.detail}`)].join('\n');
  }
}

/** One JSON log line of a driver process. */
export interface LogLine {
  readonly level?: string;
  readonly msg?: string;
  readonly peer?: string;
  readonly code?: string;
  readonly reason?: string;
  readonly [key: string]: unknown;
}

/** The JSON lines of a log file (lines that are not JSON are skipped). */
export async function logLines(file: string): Promise<LogLine[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').flatMap((l) => {
    if (!l.startsWith('{')) return [];
    try {
      return [JSON.parse(l) as LogLine];
    } catch {
      return [];
    }
  });
}

/** Wait (≤ `ms`) for a log line after the first `skip` lines that matches `pred`. */
export async function waitForLogLine(
  file: string,
  skip: number,
  pred: (l: LogLine) => boolean,
  ms = 3000,
): Promise<LogLine | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = (await logLines(file)).slice(skip).find(pred);
    if (found !== undefined || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
}
