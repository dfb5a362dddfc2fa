// Run by v8-mode-flags.test.ts under `node --trace-opt`: sets the V8 flags of the mode its arguments
// name, as main.ts does, then makes one function hot enough for V8 to optimise it, so that the trace
// says which compiler took it (target MAGLEV or TURBOFAN_JS).
import { applyModeV8Flags } from '../v8-mode-flags.js';

const applied = applyModeV8Flags(process.argv.slice(2));
function tierProbeHot(a: number, b: number): number {
  return (a * 31 + b) % 1_000_003;
}
let x = 0;
for (let i = 0; i < 3_000_000; i++) x = tierProbeHot(x, i);
process.stdout.write(`${JSON.stringify({ applied, x })}\n`);
