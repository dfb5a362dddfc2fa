import { FlagError, parseFlags } from './flags.js';

const tls = ['--ca-file', '/c/ca.crt', '--cert-file', '/c/tls.crt', '--key-file', '/c/tls.key'];

function problems(argv: string[]): readonly string[] {
  try {
    parseFlags(argv);
  } catch (e) {
    if (e instanceof FlagError) return e.problems;
    throw e;
  }
  throw new Error('no FlagError');
}

describe('parseFlags', () => {
  it('parses controller mode with defaults', () => {
    expect(parseFlags(['--mode', 'controller', '--endpoint', 'unix:///csi/csi.sock', ...tls])).toEqual({
      mode: 'controller', driverName: 'pmem-csi.intel.com', csiEndpoint: 'unix:///csi/csi.sock',
      caFile: '/c/ca.crt', certFile: '/c/tls.crt', keyFile: '/c/tls.key', logFormat: 'text', verbosity: 3,
      registryListen: '0.0.0.0:10000', leaseSeconds: 30, metricsListen: '0.0.0.0:10010',
    });
  });

  it('parses node mode; pmem-percentage 0 means 100', () => {
    const c = parseFlags(['--mode', 'node', '--endpoint', '/k/csi.sock', ...tls, '--nodeid', 'n1', '--device-mode', 'emulated',
      '--pmem-percentage', '0', '--advertised-endpoint', '10.0.0.5:10001', '--registry-endpoint', 'pmem-csi-intel-com-controller:10000', '--log-format', 'json']);
    expect(c).toMatchObject({ mode: 'node', nodeId: 'n1', deviceMode: 'emulated', pmemPercentage: 100, stateDir: '/var/lib/pmem-csi.intel.com',
      nodeControllerListen: '0.0.0.0:10001', logFormat: 'json', metricsListen: '' });
    const withMetrics = parseFlags(['--mode', 'node', '--endpoint', '/k/csi.sock', ...tls, '--nodeid', 'n1',
      '--advertised-endpoint', '10.0.0.5:10001', '--registry-endpoint', 'c:10000', '--metrics-listen', '0.0.0.0:10011']);
    expect(withMetrics).toMatchObject({ metricsListen: '0.0.0.0:10011' });
    expect(problems(['--mode', 'node', '--endpoint', '/k/csi.sock', ...tls, '--nodeid', 'n1', '--advertised-endpoint', '10.0.0.5:10001',
      '--registry-endpoint', 'c:10000', '--metrics-listen', 'everywhere'])).toEqual(['--metrics-listen: "everywhere" must be HOST:PORT']);
  });

  it('reports every problem, naming the flag and what is allowed', () => {
    expect(problems(['--mode', 'node', '--device-mode', 'ram', '--pmem-percentage', '101', '--log-format', 'xml', '--v', 'x',
      '--registry-endpoint', 'nohost', '--drivername', 'Bad_Name'])).toEqual([
      '--log-format: "xml" is not allowed; allowed values: text, json',
      '--drivername: "Bad_Name" must be a DNS subdomain (lower-case letters, digits, \'-\', \'.\')',
      '--endpoint is required',
      '--ca-file is required',
      '--cert-file is required',
      '--key-file is required',
      '--v: "x" is not an integer in 0..10',
      '--device-mode: "ram" is not allowed; allowed values: lvm, direct, emulated, fake',
      '--pmem-percentage: "101" is not an integer in 0..100',
      '--nodeid is required',
      '--advertised-endpoint is required',
      '--registry-endpoint: "nohost" must be HOST:PORT',
    ]);
  });

  it('brackets an IPv6 pod IP in HOST:PORT flags', () => {
    const c = parseFlags(['--mode', 'node', '--endpoint', '/k/csi.sock', ...tls, '--nodeid', 'n1',
      '--advertised-endpoint', 'fd00:10:244::5:10001', '--registry-endpoint', '[fd00::1]:10000']);
    expect(c).toMatchObject({ advertisedEndpoint: '[fd00:10:244::5]:10001', registryEndpoint: '[fd00::1]:10000' });
  });

  it('requires a known mode and rejects unknown flags', () => {
    expect(problems([...tls, '--endpoint', '/s'])).toEqual(['--mode is required; allowed values: controller, node']);
    expect(problems(['--mode', 'both', ...tls, '--endpoint', '/s'])).toEqual(['--mode: "both" is not allowed; allowed values: controller, node']);
    expect(problems(['--mode', 'node', '--bogus'])[0]).toMatch(/Unknown option '--bogus'/);
  });
});
