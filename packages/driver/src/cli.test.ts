import { FlagError, type DriverConfig } from '@pmem-csi/csi';
import { CommanderError } from 'commander';
import { driverProgram, type LocalFlags, type StatusFlags } from './cli.js';

const tls = ['--ca-file', '/c/ca.crt', '--cert-file', '/c/tls.crt', '--key-file', '/c/tls.key'];

interface Run {
  readonly config?: DriverConfig;
  readonly local?: LocalFlags;
  readonly status?: StatusFlags;
  readonly modes?: readonly string[];
  readonly out: string;
  readonly err: string;
}

/** Run the real command line (commander + the schema) without exiting; actions only record. */
async function run(argv: string[]): Promise<Run> {
  const seen: { -readonly [K in keyof Run]?: Run[K] } = {};
  let out = '';
  let err = '';
  const program = driverProgram({
    driver: async (config) => void (seen.config = config),
    local: async (flags) => void (seen.local = flags),
    status: async (flags) => void (seen.status = flags),
    checkTools: async (modes) => void (seen.modes = modes),
  })
    .exitOverride()
    .configureOutput({ writeOut: (s) => void (out += s), writeErr: (s) => void (err += s) });
  for (const sub of program.commands)
    sub.exitOverride().configureOutput({ writeOut: (s) => void (out += s), writeErr: (s) => void (err += s) });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (!(e instanceof CommanderError) || e.exitCode !== 0) throw e;
  }
  return { ...seen, out, err };
}

async function parseFlags(argv: string[]): Promise<DriverConfig> {
  const { config } = await run(argv);
  if (config === undefined) throw new Error(`no configuration for ${argv.join(' ')}`);
  return config;
}

async function problems(argv: string[]): Promise<readonly string[]> {
  try {
    await run(argv);
  } catch (e) {
    if (e instanceof FlagError) return e.problems;
    if (e instanceof CommanderError) return [e.message];
    throw e;
  }
  throw new Error('no FlagError');
}

describe('pmem-csi-driver command line', () => {
  it('parses controller mode with defaults', async () => {
    expect(await parseFlags(['--mode', 'controller', '--endpoint', 'unix:///csi/csi.sock', ...tls])).toEqual({
      mode: 'controller',
      driverName: 'pmem-csi.intel.com',
      csiEndpoint: 'unix:///csi/csi.sock',
      caFile: '/c/ca.crt',
      certFile: '/c/tls.crt',
      keyFile: '/c/tls.key',
      logFormat: 'text',
      verbosity: 3,
      registryListen: '0.0.0.0:10000',
      leaseSeconds: 30,
      metricsListen: '0.0.0.0:10010',
    });
  });

  it('parses node mode; pmem-percentage 0 means 100', async () => {
    const c = await parseFlags([
      '--mode',
      'node',
      '--endpoint',
      '/k/csi.sock',
      ...tls,
      '--nodeid',
      'n1',
      '--device-mode',
      'emulated',
      '--pmem-percentage',
      '0',
      '--advertised-endpoint',
      '10.0.0.5:10001',
      '--registry-endpoint',
      'pmem-csi-intel-com-controller:10000',
      '--log-format',
      'json',
    ]);
    expect(c).toMatchObject({
      mode: 'node',
      nodeId: 'n1',
      deviceMode: 'emulated',
      pmemPercentage: 100,
      stateDir: '/var/lib/pmem-csi.intel.com',
      nodeControllerListen: '0.0.0.0:10001',
      logFormat: 'json',
      metricsListen: '',
    });
    const withMetrics = await parseFlags([
      '--mode',
      'node',
      '--endpoint',
      '/k/csi.sock',
      ...tls,
      '--nodeid',
      'n1',
      '--advertised-endpoint',
      '10.0.0.5:10001',
      '--registry-endpoint',
      'c:10000',
      '--metrics-listen',
      '0.0.0.0:10011',
    ]);
    expect(withMetrics).toMatchObject({ metricsListen: '0.0.0.0:10011' });
    expect(
      await problems([
        '--mode',
        'node',
        '--endpoint',
        '/k/csi.sock',
        ...tls,
        '--nodeid',
        'n1',
        '--advertised-endpoint',
        '10.0.0.5:10001',
        '--registry-endpoint',
        'c:10000',
        '--metrics-listen',
        'everywhere',
      ]),
    ).toEqual(['--metrics-listen: "everywhere" must be HOST:PORT']);
  });

  it('reports every problem, naming the flag and what is allowed', async () => {
    expect(
      await problems([
        '--mode',
        'node',
        '--device-mode',
        'ram',
        '--pmem-percentage',
        '101',
        '--cxl-regions',
        'yes',
        '--log-format',
        'xml',
        '--v',
        'x',
        '--registry-endpoint',
        'nohost',
        '--drivername',
        'Bad_Name',
      ]),
    ).toEqual([
      "--drivername: \"Bad_Name\" must be a DNS subdomain (lower-case letters, digits, '-', '.')",
      '--endpoint is required',
      '--ca-file is required',
      '--cert-file is required',
      '--key-file is required',
      '--log-format: "xml" is not allowed; allowed values: text, json',
      '--v: "x" is not an integer in 0..10',
      '--nodeid is required',
      '--device-mode: "ram" is not allowed; allowed values: lvm, direct, emulated, fake',
      '--pmem-percentage: "101" is not an integer in 0..100',
      '--cxl-regions: "yes" is not allowed; allowed values: manual, assemble',
      '--advertised-endpoint is required',
      '--registry-endpoint: "nohost" must be HOST:PORT or a comma-separated list HOST:PORT,HOST:PORT,...',
    ]);
  });

  it('brackets an IPv6 pod IP in HOST:PORT flags', async () => {
    const c = await parseFlags([
      '--mode',
      'node',
      '--endpoint',
      '/k/csi.sock',
      ...tls,
      '--nodeid',
      'n1',
      '--advertised-endpoint',
      'fd00:10:244::5:10001',
      '--registry-endpoint',
      '[fd00::1]:10000',
    ]);
    expect(c).toMatchObject({ advertisedEndpoint: '[fd00:10:244::5]:10001', registryEndpoint: '[fd00::1]:10000' });
  });

  it('requires a known mode and rejects unknown flags, listing the valid ones', async () => {
    expect(await problems([...tls, '--endpoint', '/s'])).toEqual([
      '--mode is required; allowed values: controller, node',
    ]);
    expect(await problems(['--mode', 'both', ...tls, '--endpoint', '/s'])).toEqual([
      '--mode: "both" is not allowed; allowed values: controller, node',
    ]);
    let err = '';
    await expect(
      run(['--mode', 'node', '--bogus']).catch((e: unknown) => {
        err = e instanceof CommanderError ? e.message : String(e);
        throw e;
      }),
    ).rejects.toMatchObject({ code: 'commander.unknownOption', exitCode: 1 });
    expect(err).toBe("error: unknown option '--bogus'");
  });

  it('shows the valid options after an unknown one', async () => {
    let stderr = '';
    const program = driverProgram({
      driver: async () => undefined,
      local: async () => undefined,
      status: async () => undefined,
      checkTools: async () => undefined,
    })
      .exitOverride()
      .configureOutput({ writeErr: (s) => void (stderr += s), writeOut: () => undefined });
    await expect(program.parseAsync(['--bogus'], { from: 'user' })).rejects.toBeInstanceOf(CommanderError);
    expect(stderr).toContain("error: unknown option '--bogus'");
    expect(stderr).toContain('--device-mode <MODE>');
    expect(stderr).toContain('--registry-listen <HOST:PORT>');
  });

  it('answers --help and --version without running anything', async () => {
    const help = await run(['--help']);
    expect(help.config).toBeUndefined();
    expect(help.out).toMatch(/^usage: pmem-csi-driver --mode controller\|node \[flags\]/);
    for (const name of [
      'mode',
      'drivername',
      'endpoint',
      'nodeid',
      'device-mode',
      'emulated-size',
      'state-dir',
      'metrics-listen',
    ])
      expect(help.out).toContain(`--${name} <`);
    for (const command of ['local [--keep]', 'status [--url URL]', 'check-tools [MODE ...]'])
      expect(help.out).toContain(`pmem-csi-driver ${command}`);
    expect((await run(['--version'])).out).toMatch(/^pmem-csi-driver \d+\.\d+\.\d+/);
    const localHelp = await run(['local', '--help']);
    expect(localHelp.local).toBeUndefined();
    expect(localHelp.out).toContain('--state-dir <DIR>');
  });

  it('parses the subcommands into typed options', async () => {
    expect((await run(['local', '--keep', '--state-dir', 'here'])).local).toEqual({
      keep: true,
      fake: false,
      stateDir: 'here',
    });
    expect((await run(['local'])).local).toEqual({ keep: false, fake: false, stateDir: undefined });
    expect((await run(['status', '--url', 'http://h:1'])).status).toEqual({ url: 'http://h:1', stateDir: undefined });
    expect((await run(['check-tools', 'lvm', 'direct'])).modes).toEqual(['lvm', 'direct']);
    await expect(run(['local', '--state-dir', ''])).rejects.toMatchObject({ code: 'commander.invalidArgument' });
    await expect(run(['local', '--nope'])).rejects.toMatchObject({ code: 'commander.unknownOption' });
  });
});
