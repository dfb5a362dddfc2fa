import {
  DRIVER_FLAGS,
  FlagError,
  driverArgValue,
  parseDriverFlags,
  readDriverArgs,
  renderDriverArgs,
  type DriverArgs,
} from './driver-flags.js';

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
});
