import { fuzzRuns, fuzzSeed } from './fuzz-env.js';

describe('the fuzz knobs', () => {
  it('PMEM_CSI_FUZZ_RUNS: the fallback when unset or empty, a positive integer, anything else refused', () => {
    expect(fuzzRuns(200, {})).toBe(200);
    expect(fuzzRuns(200, { PMEM_CSI_FUZZ_RUNS: '' })).toBe(200);
    expect(fuzzRuns(200, { PMEM_CSI_FUZZ_RUNS: '5' })).toBe(5);
    for (const bad of ['0', '-3', '1.5', 'many'])
      expect(() => fuzzRuns(200, { PMEM_CSI_FUZZ_RUNS: bad })).toThrow(
        `PMEM_CSI_FUZZ_RUNS must be a positive integer, got "${bad}"`,
      );
  });

  it('PMEM_CSI_FUZZ_SEED: undefined when unset, the seeds fast-check prints (negative too), anything else refused', () => {
    expect(fuzzSeed({})).toBeUndefined();
    expect(fuzzSeed({ PMEM_CSI_FUZZ_SEED: '' })).toBeUndefined();
    expect(fuzzSeed({ PMEM_CSI_FUZZ_SEED: '-1859730554' })).toBe(-1859730554);
    expect(fuzzSeed({ PMEM_CSI_FUZZ_SEED: '0' })).toBe(0);
    expect(fuzzSeed({ PMEM_CSI_FUZZ_SEED: '4294967295' })).toBe(4294967295);
    for (const bad of ['4294967296', '-2147483649', '1.5', 'x'])
      expect(() => fuzzSeed({ PMEM_CSI_FUZZ_SEED: bad })).toThrow(/^PMEM_CSI_FUZZ_SEED must be an integer seed/);
  });
});
