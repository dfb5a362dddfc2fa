import { outcomesOf, parseJUnit } from './junit.js';
import { skipRegex } from './skips.js';

describe('JUnit reader', () => {
  it('counts passed, failed and skipped cases and keeps failure messages', () => {
    const xml = `<?xml version="1.0"?><testsuites><testsuite name="CSI Driver Test Suite">
      <testcase name="[It] Node Service NodeGetInfo should return appropriate values" time="0.01"></testcase>
      <testcase name="[It] Controller Service [Controller Server] CreateVolume should fail &amp; say so" time="0.1"><failure message="Expected &lt;codes.Code&gt;: 3" type="failed">details</failure></testcase>
      <testcase name="[It] ListSnapshots should work" time="0"><skipped message="skipped"></skipped></testcase>
      <testcase name="[It] Identity Service GetPluginInfo should work" time="0"/>
    </testsuite></testsuites>`;
    const s = parseJUnit(xml);
    expect([s.passed, s.failed, s.skipped]).toEqual([2, 1, 1]);
    expect(s.cases[1]).toEqual({
      name: '[It] Controller Service [Controller Server] CreateVolume should fail & say so',
      status: 'failed',
      message: 'Expected <codes.Code>: 3',
    });
  });

  it('keeps why a case was skipped and finds outcomes by exact spec text', () => {
    const xml = `<testsuites><testsuite>
      <testcase name="[It] Node Service should work" time="2"></testcase>
      <testcase name="[It] Node Service should be idempotent" time="0"><skipped message="skipped - Controller Service not provided: CreateVolume not supported"></skipped></testcase>
      <testcase name="[It] Node Service NodeExpandVolume should work" time="0"><skipped/></testcase>
    </testsuite></testsuites>`;
    const s = parseJUnit(xml);
    expect(s.cases.map((c) => c.message)).toEqual([
      undefined,
      'skipped - Controller Service not provided: CreateVolume not supported',
      undefined,
    ]);
    expect(
      outcomesOf(s, ['Node Service should work', 'Node Service should be idempotent', 'Node Service should fly']),
    ).toEqual([
      { spec: 'Node Service should work', status: 'passed' },
      {
        spec: 'Node Service should be idempotent',
        status: 'skipped',
        message: 'skipped - Controller Service not provided: CreateVolume not supported',
      },
      { spec: 'Node Service should fly', status: 'missing' },
    ]);
  });

  it('builds a skip regex that matches exactly the listed spec', () => {
    const re = new RegExp(
      skipRegex([{ spec: 'Node Service NodeExpandVolume should work (x)', why: 'test' }]) ?? 'never',
    );
    expect(re.test('CSI Driver Test Suite Node Service NodeExpandVolume should work (x)')).toBe(true);
    expect(re.test('Node Service NodeExpandVolume should work (x) too')).toBe(false);
    expect(skipRegex([])).toBeUndefined();
  });
});
