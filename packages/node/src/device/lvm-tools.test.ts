import { readFileSync } from 'node:fs';
import { CommandFailedError } from '@pmem-csi/runtime';
import { InternalError } from '@pmem-csi/csi';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import {
  LvmTools,
  isLvmNotFound,
  parseFullReport,
  parseLvsReport,
  parsePvsReport,
  parseVgsReport,
} from './lvm-tools.js';
import { calls, fullReport, reply } from './__fixtures__/tool-output.js';

const fixture = (name: string): string => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');
const json = (name: string): unknown => JSON.parse(fixture(name));

describe('LVM report parsers', () => {
  it('reads vgs with numbers given as strings and comma-separated tags', () => {
    expect(parseVgsReport(json('vgs.json'))).toEqual([
      { name: 'ndbus0region0fsdax', size: 3170893824, free: 1992294400, extentSize: 4194304, tags: [] },
      { name: 'system', size: 254006558720, free: 0, extentSize: 4194304, tags: ['root', 'os'] },
    ]);
    expect(parseVgsReport(json('vgs-empty.json'))).toEqual([]);
  });

  it('reads lvs and pvs', () => {
    const lvs = parseLvsReport(json('lvs.json'));
    expect(lvs.map((lv) => [lv.vgName, lv.size, lv.attr])).toEqual([
      ['ndbus0region0fsdax', 1073741824, '-wi-a-----'],
      ['ndbus0region0fsdax', 104857600, '-wi-a-----'],
      ['system', 254006558720, '-wi-ao----'],
    ]);
    expect(lvs[0]?.path).toBe(
      '/dev/ndbus0region0fsdax/pvc-8a-933e210faec20ae105ba0ee4eacbb67925ecb09fb3bede2edd23c303',
    );
    expect(parsePvsReport(json('pvs.json'))).toEqual([
      { name: '/dev/pmem0', vgName: 'ndbus0region0fsdax' },
      { name: '/dev/sda3', vgName: 'system' },
      { name: '/dev/sdb', vgName: '' },
    ]);
  });

  it('merges rows of several reports and treats empty output as none', () => {
    const two = {
      report: [{ pv: [{ pv_name: '/dev/a', vg_name: 'x' }] }, { pv: [{ pv_name: '/dev/b', vg_name: '' }] }],
    };
    expect(parsePvsReport(two).map((p) => p.name)).toEqual(['/dev/a', '/dev/b']);
    expect(parseLvsReport(undefined)).toEqual([]);
  });

  it.each([
    [{ vg: [] }, 'vgs: unexpected output at <top>: expected {"report":[...]}, got {"vg":[]}'],
    [{ report: [{ lv: [] }] }, 'vgs: unexpected output at .report[0].vg: expected an array, got undefined'],
    [{ report: [{ vg: ['x'] }] }, 'vgs: unexpected output at .report[0].vg[0]: expected an object, got "x"'],
    [
      { report: [{ vg: [{ vg_name: 'a', vg_size: 4096, vg_free: '0', vg_extent_size: '4194304', vg_tags: '' }] }] },
      'vgs: unexpected output at .report[0].vg[0].vg_size: expected a string, got 4096',
    ],
    [
      { report: [{ vg: [{ vg_name: 'a', vg_size: '4.00g', vg_free: '0', vg_extent_size: '4194304', vg_tags: '' }] }] },
      'vgs: unexpected output at .report[0].vg[0].vg_size: expected a byte count as a string of digits, got "4.00g"',
    ],
    [
      { report: [{ vg: [{ vg_name: 'a', vg_size: '1', vg_free: '0', vg_extent_size: '4194304' }] }] },
      'vgs: unexpected output at .report[0].vg[0].vg_tags: expected a string, got undefined',
    ],
  ])('fails clearly on %j', (value, message) => {
    expect(() => parseVgsReport(value)).toThrow(new InternalError(message));
  });
});

describe('lvm fullreport parser', () => {
  // Recorded on a host (lvm2 2.03.16, loop devices, activation off: attr "XX"): VG "data" with a
  // cache pool and a "vol1" of its own, ndbus0region1fsdax without LVs, the tagged
  // ndbus0region0fsdax with three LVs, and /dev/loop3 in no VG (the last object: only pv and pvseg).
  // vgs-host.json and lvs-host.json are `vgs` and `lvs` of the same moment.
  const host = json('fullreport-host.json');

  it('reads what vgs and lvs print, in their order (fullreport orders its VG objects otherwise)', () => {
    const report = parseFullReport(host);
    expect(report).toEqual({ vgs: parseVgsReport(json('vgs-host.json')), lvs: parseLvsReport(json('lvs-host.json')) });
    expect(report.vgs.map((g) => [g.name, g.size, g.free, g.tags])).toEqual([
      ['data', 205520896, 167772160, []],
      ['ndbus0region0fsdax', 205520896, 180355072, ['other', 'pmem-csi.intel.com/owner=x']],
      ['ndbus0region1fsdax', 205520896, 205520896, []],
    ]);
    expect(report.lvs.map((l) => `${l.vgName}/${l.name}`)).toEqual([
      'data/cpool',
      'data/vol1',
      'ndbus0region0fsdax/a-later',
      'ndbus0region0fsdax/vol1',
      'ndbus0region0fsdax/vol2',
    ]);
    expect(report.lvs[4]).toEqual({
      name: 'vol2',
      vgName: 'ndbus0region0fsdax',
      size: 12582912,
      path: '/dev/ndbus0region0fsdax/vol2',
      attr: '-wi-XX----',
    });
  });

  it('keeps an internal LV with an empty lv_path (the device manager leaves it out), ignores PVs in no VG', () => {
    const report = parseFullReport(
      JSON.parse(
        fullReport({
          vgs: [{ name: 'ndbus0region1fsdax', size: 8 * 2 ** 30, free: 2 ** 30 }],
          lvs: [
            { name: 'vol', vg: 'ndbus0region1fsdax', size: 2 ** 30 },
            { name: 'lvol0_pmspare', vg: 'ndbus0region1fsdax', size: 4194304, path: '' },
          ],
          orphanPvs: ['/dev/sdb', '/dev/pmem1.1'],
        }),
      ),
    );
    expect(report.vgs.map((g) => g.name)).toEqual(['ndbus0region1fsdax']);
    expect(report.lvs.map((l) => [l.name, l.path])).toEqual([
      ['lvol0_pmspare', ''],
      ['vol', '/dev/ndbus0region1fsdax/vol'],
    ]);
  });

  it('reads no PVs at all ({"report":[]}, as LVM prints it) and empty output as nothing', () => {
    expect(parseFullReport({ report: [] })).toEqual({ vgs: [], lvs: [] });
    expect(parseFullReport({ report: [{ pv: [{ pv_name: '/dev/sdb' }], pvseg: [{ pvseg_start: '0' }] }] })).toEqual({
      vgs: [],
      lvs: [],
    });
    expect(parseFullReport(undefined)).toEqual({ vgs: [], lvs: [] });
  });

  const vg = { vg_name: 'a', vg_size: '8388608', vg_free: '0', vg_extent_size: '4194304', vg_tags: '' };
  const lv = { lv_name: 'v', vg_name: 'a', lv_size: '4194304', lv_path: '/dev/a/v', lv_attr: '-wi-a-----' };
  it.each([
    [[], 'lvm fullreport: unexpected output at <top>: expected {"report":[...]}, got []'],
    [{ report: {} }, 'lvm fullreport: unexpected output at <top>: expected {"report":[...]}, got {"report":{}}'],
    [
      { report: [{ vg: [vg], lv: [] }, 'x'] },
      'lvm fullreport: unexpected output at .report[1]: expected an object, got "x"',
    ],
    [{ report: [{ vg: {}, lv: [] }] }, 'lvm fullreport: unexpected output at .report[0].vg: expected an array, got {}'],
    [
      { report: [{ vg: [vg], lv: null }] },
      'lvm fullreport: unexpected output at .report[0].lv: expected an array, got null',
    ],
    [
      {
        report: [
          { vg: [vg], lv: [lv] },
          { pv: [], lv: [lv] },
        ],
      },
      'lvm fullreport: unexpected output at .report[1]: expected "vg" and "lv" together, or neither (PVs in no VG), got only "lv"',
    ],
    [
      { report: [{ vg: [vg], pv: [] }] },
      'lvm fullreport: unexpected output at .report[0]: expected "vg" and "lv" together, or neither (PVs in no VG), got only "vg"',
    ],
    [
      { report: [{ vg: [vg], lv: [7] }] },
      'lvm fullreport: unexpected output at .report[0].lv[0]: expected an object, got 7',
    ],
    [
      { report: [{ vg: [{ ...vg, vg_free: '-1' }], lv: [] }] },
      'lvm fullreport: unexpected output at .report[0].vg[0].vg_free: expected a byte count as a string of digits, got "-1"',
    ],
    [
      { report: [{ vg: [vg], lv: [{ ...lv, lv_path: undefined }] }] },
      'lvm fullreport: unexpected output at .report[0].lv[0].lv_path: expected a string, got undefined',
    ],
  ])('fails clearly on %j', (value, message) => {
    expect(() => parseFullReport(value)).toThrow(new InternalError(message));
  });
});

describe('isLvmNotFound', () => {
  const failed = (code: number, stderr: string): CommandFailedError =>
    new CommandFailedError('x', 'lvremove', code, stderr);

  it('needs exit code 5 and a not-found message', () => {
    expect(isLvmNotFound(failed(5, '  Failed to find logical volume "vg/lv"\n'))).toBe(true);
    expect(isLvmNotFound(failed(5, '  Volume group "vg" not found\n  Cannot process volume group vg\n'))).toBe(true);
    expect(isLvmNotFound(failed(5, '  Logical volume vg/lv contains a filesystem in use.\n'))).toBe(false);
    expect(isLvmNotFound(failed(3, '  Failed to find logical volume "vg/lv"\n'))).toBe(false);
    expect(isLvmNotFound(new Error('Failed to find logical volume "vg/lv"'))).toBe(false);
  });
});

describe('LvmTools', () => {
  it('runs each command with the exact arguments', async () => {
    const report = ['--reportformat', 'json', '--units', 'b', '--nosuffix', '-o'];
    const runner = new ScriptedRunner([
      {
        command: 'vgs',
        args: [...report, 'vg_name,vg_size,vg_free,vg_extent_size,vg_tags'],
        exact: true,
        stdout: fixture('vgs.json'),
      },
      {
        command: 'lvs',
        args: [...report, 'lv_name,vg_name,lv_size,lv_path,lv_attr'],
        exact: true,
        stdout: fixture('lvs.json'),
      },
      { command: 'pvs', args: [...report, 'pv_name,vg_name'], exact: true, stdout: fixture('pvs.json') },
      {
        command: 'lvm',
        args: [
          'fullreport',
          '--reportformat',
          'json',
          '--units',
          'b',
          '--nosuffix',
          '--configreport',
          'vg',
          '-o',
          'vg_name,vg_size,vg_free,vg_extent_size,vg_tags',
          '--configreport',
          'lv',
          '-o',
          'lv_name,vg_name,lv_size,lv_path,lv_attr',
          '--configreport',
          'pv',
          '-o',
          'pv_name',
          '--configreport',
          'pvseg',
          '-o',
          'pvseg_start',
          '--configreport',
          'seg',
          '-o',
          'seg_start',
        ],
        exact: true,
        stdout: fixture('fullreport-host.json'),
      },
      { command: 'pvcreate', args: ['-y', '/dev/pmem0'], exact: true },
      { command: 'vgcreate', args: ['ndbus0region0fsdax', '/dev/pmem0'], exact: true },
      {
        command: 'vgcreate',
        args: ['--addtag', 'pmem-csi.intel.com/owner=a.example', 'ndbus0region1fsdax', '/dev/pmem1'],
        exact: true,
      },
      {
        command: 'vgchange',
        args: ['--addtag', 'pmem-csi.intel.com/owner=a.example', 'ndbus0region0fsdax'],
        exact: true,
      },
      { command: 'vgextend', args: ['ndbus0region0fsdax', '/dev/pmem0.1'], exact: true },
      { command: 'lvcreate', args: ['-Zn', '-y', '-L', '8388608b', '-n', 'vol', 'ndbus0region0fsdax'], exact: true },
      { command: 'lvextend', args: ['-L', '12582912b', 'ndbus0region0fsdax/vol'], exact: true },
      { command: 'lvremove', args: ['-fy', 'ndbus0region0fsdax/vol'], exact: true },
    ]);
    const lvm = new LvmTools(runner);
    expect(await lvm.vgs()).toHaveLength(2);
    expect(await lvm.lvs()).toHaveLength(3);
    expect(await lvm.pvs()).toHaveLength(3);
    expect(await lvm.fullReport()).toMatchObject({ vgs: { length: 3 }, lvs: { length: 5 } });
    await lvm.pvcreate('/dev/pmem0');
    await lvm.vgcreate('ndbus0region0fsdax', ['/dev/pmem0']);
    await lvm.vgcreate('ndbus0region1fsdax', ['/dev/pmem1'], { tags: ['pmem-csi.intel.com/owner=a.example'] });
    await lvm.vgAddTag('ndbus0region0fsdax', 'pmem-csi.intel.com/owner=a.example');
    await lvm.vgextend('ndbus0region0fsdax', '/dev/pmem0.1');
    await lvm.lvcreate({ vg: 'ndbus0region0fsdax', name: 'vol', size: 8388608 });
    await lvm.lvextend({ vg: 'ndbus0region0fsdax', name: 'vol', size: 12582912 });
    await lvm.lvremove('ndbus0region0fsdax', 'vol');
    expect(runner.unused()).toEqual([]);
  });

  it('the unit tests script the same fullreport command line, in the shape it prints', async () => {
    const runner = new ScriptedRunner([reply.fullReport(fullReport({ vgs: [], orphanPvs: ['/dev/sdb'] }))]);
    expect(await new LvmTools(runner).fullReport()).toEqual({ vgs: [], lvs: [] });
    expect(runner.calls).toEqual([calls.fullReport]);
  });

  it('passes the caller signal to the runner', async () => {
    const seen: Array<AbortSignal | undefined> = [];
    const runner = new ScriptedRunner([{ command: 'lvremove' }]);
    const run = runner.run.bind(runner);
    runner.run = (command, args, options) => {
      seen.push(options?.signal);
      return run(command, args, options);
    };
    const ac = new AbortController();
    await new LvmTools(runner).lvremove('vg', 'lv', { signal: ac.signal });
    expect(seen).toEqual([ac.signal]);
  });
});
