import type { ControllerStatus } from '@pmem-csi/controller';
import { GiB } from '@pmem-csi/csi';
import { humanSize, renderStatus } from './status-table.js';

const status: ControllerStatus = {
  driverName: 'pmem-csi.intel.com',
  startedAt: '2026-01-01T00:00:00.000Z',
  settled: true,
  volumes: 1,
  nodes: [
    {
      nodeId: 'n1',
      endpoint: '10.0.0.1:10001',
      state: 'available',
      deviceMode: 'lvm',
      version: '0.1.0',
      volumes: 1,
      capacity: { total: 4 * GiB, managed: 4 * GiB, available: 1.5 * GiB, maxVolumeSize: GiB },
      registeredAt: '2026-01-01T00:00:00.000Z',
    },
  ],
};

describe('status rendering', () => {
  it('formats sizes', () => {
    expect([humanSize(0), humanSize(1536), humanSize(GiB), humanSize(1.5 * GiB)]).toEqual([
      '0 B',
      '1.5 KiB',
      '1 GiB',
      '1.5 GiB',
    ]);
  });

  it('renders the node table', () => {
    expect(renderStatus(status)).toBe(
      [
        'driver pmem-csi.intel.com: 1 node(s), 1 volume(s)',
        'NODE  STATE      MODE  ENDPOINT        TOTAL  FREE     MAX VOLUME  VOLUMES',
        'n1    available  lvm   10.0.0.1:10001  4 GiB  1.5 GiB  1 GiB       1',
      ].join('\n'),
    );
  });
});
