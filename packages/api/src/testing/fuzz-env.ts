// The fuzz tests' two knobs, read one way everywhere: PMEM_CSI_FUZZ_RUNS (cases per property) and
// PMEM_CSI_FUZZ_SEED (replay a failure: fast-check prints the seed, a 32-bit integer of either sign).
// A malformed value fails the test naming the variable and what it accepts, never silently ignored.

/** PMEM_CSI_FUZZ_RUNS, or `fallback` when unset or empty. */
export function fuzzRuns(fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['PMEM_CSI_FUZZ_RUNS'];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new Error(`PMEM_CSI_FUZZ_RUNS must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** PMEM_CSI_FUZZ_SEED, or undefined when unset or empty (fast-check then picks one and prints it on failure). */
export function fuzzSeed(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env['PMEM_CSI_FUZZ_SEED'];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < -(2 ** 31) || n >= 2 ** 32)
    throw new Error(
      `PMEM_CSI_FUZZ_SEED must be an integer seed as fast-check prints it (-2147483648 to 4294967295), got ${JSON.stringify(raw)}`,
    );
  return n;
}
