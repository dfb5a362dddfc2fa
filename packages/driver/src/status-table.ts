// Renders the controller status as a readable table for the `status` command and the demo.
import type { ControllerStatus } from '@pmem-csi/controller';

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 1073741824 -> "1 GiB", 1610612736 -> "1.5 GiB". */
export function humanSize(bytes: number): string {
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${UNITS[u]}`;
}

/** Lay out rows as aligned columns. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]): string =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The node table of a controller status. */
export function renderStatus(s: ControllerStatus): string {
  const rows = s.nodes.map((n) => [
    n.nodeId,
    n.state,
    n.deviceMode,
    n.endpoint,
    humanSize(n.capacity.total),
    humanSize(n.capacity.available),
    humanSize(n.capacity.maxVolumeSize),
    String(n.volumes),
  ]);
  const head = `driver ${s.driverName}: ${s.nodes.length} node(s), ${s.volumes} volume(s)${s.settled ? '' : ' (still collecting volumes from nodes)'}`;
  return `${head}\n${table(['NODE', 'STATE', 'MODE', 'ENDPOINT', 'TOTAL', 'FREE', 'MAX VOLUME', 'VOLUMES'], rows)}`;
}
