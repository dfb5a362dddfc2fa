// Scripted host tools for node service tests: a runner whose script each case replaces (calls can be
// held to provoke lock conflicts), and findmnt answers for "nothing mounted" and "mounted here"
// (the runner carries its mount table as findmnt answers, so the services ask it, not the host).
import type { RunOptions, RunResult } from '@pmem-csi/runtime';
import { ScriptedRunner, type ScriptedReply } from '@pmem-csi/runtime/testing';
import { findmntTable, type RunnerWithMountTable } from '../mount/findmnt.js';

export const FINDMNT = ['-J', '-o', 'TARGET,SOURCE,FSTYPE,OPTIONS,VFS-OPTIONS,FS-OPTIONS', '--mountpoint'];

/** A runner whose script tests replace per case; calls can be held to provoke lock conflicts. */
export class SwitchableRunner implements RunnerWithMountTable {
  inner = new ScriptedRunner();
  readonly mountTable = findmntTable(this);
  gate: Promise<void> | undefined;
  which(tool: string): string | undefined {
    return this.inner.which(tool);
  }
  async run(command: string, args: readonly string[], options?: RunOptions): Promise<RunResult> {
    await this.gate;
    return this.inner.run(command, args, options);
  }
}

/** findmnt finds nothing at `path`. */
export function notMounted(path: string): ScriptedReply {
  return { command: 'findmnt', args: [...FINDMNT, path], exact: true, exitCode: 1 };
}

/** findmnt finds `source` (ext4 unless `extra` says otherwise) mounted at `path`. */
export function mountedAt(path: string, source: string, extra: Record<string, string> = {}): ScriptedReply {
  const fs = {
    target: path,
    source,
    fstype: 'ext4',
    options: 'rw,relatime',
    'vfs-options': 'rw,relatime',
    'fs-options': 'rw',
    ...extra,
  };
  return { command: 'findmnt', args: [...FINDMNT, path], exact: true, stdout: JSON.stringify({ filesystems: [fs] }) };
}

/** One mount of a scripted mount table: target and source, ext4 read-write unless `extra` says otherwise. */
export interface TableMount {
  readonly target: string;
  readonly source: string;
  readonly extra?: Record<string, string>;
}

/** `findmnt --list` (the whole mount table, publications.ts) answers with these mounts, in this order. */
export function mountTable(mounts: readonly TableMount[]): ScriptedReply {
  const filesystems = mounts.map((m) => ({
    target: m.target,
    source: m.source,
    fstype: 'ext4',
    options: 'rw,relatime',
    'vfs-options': 'rw,relatime',
    'fs-options': 'rw',
    ...m.extra,
  }));
  return {
    command: 'findmnt',
    args: ['-J', '--list', '-o', 'TARGET,SOURCE,FSTYPE,OPTIONS,VFS-OPTIONS,FS-OPTIONS'],
    exact: true,
    stdout: JSON.stringify({ filesystems }),
  };
}
