import { driverArgValue, readDriverArgs, renderDriverArgs, type DriverArgs } from './driver-args.js';
import { FlagError, parseDriverFlags, parseHostPort, splitHostPortList } from './driver-flags-parse.js';
import { DRIVER_FLAGS, type NodeConfig } from './driver-flags.js';

const tls = { caFile: '/c/ca.crt', certFile: '/c/tls.crt', keyFile: '/c/tls.key' };

describe('the flag schema of pmem-csi-driver', () => {
  it('renders a configuration and parses it back to the same values (both modes)', () => {
    const node: DriverArgs = {
      mode: 'node',
      driverName: 'pmem-csi.example.org',
      csiEndpoint: 'unix:///k/csi.sock',
      ...tls,
      logFormat: 'json',
      verbosity: 5,
      nodeId: 'n1',
      deviceMode: 'emulated',
      pmemPercentage: 50,
      cxlRegions: 'assemble',
      emulatedSize: 128 * 1024 ** 2,
      stateDir: '/s',
      nodeControllerListen: '0.0.0.0:10001',
      advertisedEndpoint: '10.0.0.1:10001',
      registryEndpoint: 'ctl:10000',
      metricsListen: '',
    };
    expect(parseDriverFlags(readDriverArgs(renderDriverArgs(node)))).toEqual(node);
    const controller: DriverArgs = {
      mode: 'controller',
      driverName: 'pmem-csi.intel.com',
      csiEndpoint: 'unix:///csi/csi.sock',
      ...tls,
      logFormat: 'text',
      verbosity: 3,
      registryListen: '0.0.0.0:10000',
      leaseSeconds: 30,
      metricsListen: '0.0.0.0:10010',
    };
    expect(renderDriverArgs(controller)[0]).toBe('--mode=controller');
    expect(parseDriverFlags(readDriverArgs(renderDriverArgs(controller)))).toEqual(controller);
  });

  it('sets every field of a configuration from a flag (no field without one)', () => {
    const keys = new Set(DRIVER_FLAGS.map((f) => f.key));
    const node = parseDriverFlags({
      mode: 'node',
      endpoint: '/s',
      'ca-file': 'a',
      'cert-file': 'b',
      'key-file': 'c',
      nodeid: 'n',
      'advertised-endpoint': 'h:1',
      'registry-endpoint': 'r:2',
    });
    for (const key of Object.keys(node)) expect(keys.has(key as never)).toBe(true);
    expect(node).toMatchObject({
      deviceMode: 'lvm',
      pmemPercentage: 100,
      cxlRegions: 'manual',
      stateDir: '/var/lib/pmem-csi.intel.com',
      metricsListen: '',
      emulatedSize: 4 * 1024 ** 3,
    });
  });

  it('renders only the flags of the mode and nothing that was not given', () => {
    expect(renderDriverArgs({ mode: 'controller', verbosity: 2, nodeId: 'ignored' } as DriverArgs)).toEqual([
      '--mode=controller',
      '--v=2',
    ]);
  });

  it("reads a flag back from arguments, also in the Go operator's spelling, and refuses unknown names", () => {
    expect(driverArgValue(['--mode=node', '--device-mode=direct'], 'device-mode')).toBe('direct');
    expect(driverArgValue(['-deviceMode=lvm'], 'device-mode')).toBe('lvm');
    expect(driverArgValue(['--device-mode', 'emulated'], 'device-mode')).toBe('emulated');
    expect(driverArgValue(['--mode=node'], 'device-mode')).toBeUndefined();
    expect(() => driverArgValue([], 'colour')).toThrow(
      /pmem-csi-driver has no flag --colour; flags: --mode, --drivername/,
    );
  });

  it('reports every problem at once as a FlagError', () => {
    expect(() =>
      parseDriverFlags({
        mode: 'controller',
        endpoint: '/s',
        'ca-file': 'a',
        'cert-file': 'b',
        'key-file': 'c',
        'lease-seconds': '1',
      }),
    ).toThrow(new FlagError(['--lease-seconds: "1" is not an integer in 3..3600']));
  });

  describe('--registry-endpoint: one HOST:PORT or a list (one registration per controller replica)', () => {
    const node = (endpoint: string): NodeConfig =>
      parseDriverFlags({
        mode: 'node',
        endpoint: '/s',
        'ca-file': 'a',
        'cert-file': 'b',
        'key-file': 'c',
        nodeid: 'n',
        'advertised-endpoint': 'h:1',
        'registry-endpoint': endpoint,
      }) as NodeConfig;
    const problems = (endpoint: string): readonly string[] => {
      try {
        node(endpoint);
      } catch (e) {
        if (e instanceof FlagError) return e.problems;
        throw e;
      }
      throw new Error(`"${endpoint}" was accepted`);
    };
    const FORM = 'HOST:PORT or a comma-separated list HOST:PORT,HOST:PORT,...';

    it('keeps a single endpoint as it was and normalizes a list (spaces dropped, IPv6 bracketed)', () => {
      expect(node('ctl.ns.svc:10000').registryEndpoint).toBe('ctl.ns.svc:10000');
      const list = node('ctl-a:10000, 10.0.0.7:10000,fd00::1:10000');
      expect(list.registryEndpoint).toBe('ctl-a:10000,10.0.0.7:10000,[fd00::1]:10000');
      expect(splitHostPortList(list.registryEndpoint)).toEqual(['ctl-a:10000', '10.0.0.7:10000', '[fd00::1]:10000']);
      expect(splitHostPortList('')).toEqual([]);
    });

    it('renders a list as one flag and reads it back', () => {
      const args = renderDriverArgs({ mode: 'node', registryEndpoint: '127.0.0.1:1,127.0.0.1:2' });
      expect(args).toEqual(['--mode=node', '--registry-endpoint=127.0.0.1:1,127.0.0.1:2']);
      expect(driverArgValue(args, 'registry-endpoint')).toBe('127.0.0.1:1,127.0.0.1:2');
    });

    it('refuses bad entries, empty entries and duplicates, naming the flag and the allowed form', () => {
      expect(problems('nohost')).toEqual([`--registry-endpoint: "nohost" must be ${FORM}`]);
      expect(problems('a:1,b,c:x')).toEqual([
        `--registry-endpoint: "b", "c:x" in "a:1,b,c:x" must be HOST:PORT; allowed: ${FORM}`,
      ]);
      expect(problems('a:1,,b:2')).toEqual([`--registry-endpoint: "a:1,,b:2" has an empty entry; allowed: ${FORM}`]);
      expect(problems('a:1,')).toEqual([`--registry-endpoint: "a:1," has an empty entry; allowed: ${FORM}`]);
      expect(problems('a:1, a:1')).toEqual([
        `--registry-endpoint: "a:1" is listed twice in "a:1, a:1"; allowed: ${FORM}`,
      ]);
      expect(problems('')).toEqual(['--registry-endpoint is required']);
    });

    it('splits HOST:PORT into host and port (IPv6 without brackets) and refuses what is not one', () => {
      expect(parseHostPort('ctl.ns.svc:10000')).toEqual({ host: 'ctl.ns.svc', port: 10000 });
      expect(parseHostPort('[fd00::1]:443')).toEqual({ host: 'fd00::1', port: 443 });
      expect(() => parseHostPort('ctl:0')).toThrow(
        new RangeError('"ctl:0" must be HOST:PORT with a port from 1 to 65535 ([IPv6]:PORT for IPv6 hosts)'),
      );
      expect(() => parseHostPort('fd00::1:443')).toThrow(/must be HOST:PORT/);
    });
  });
});
