// Release notes: the commits since the previous release tag (or since the first commit), one
// line each, plus where the artifacts are and how to verify them.
import type { Commit } from './git.js';

const MAX_SUBJECT = 200;

export interface NotesInput {
  readonly version: string;
  readonly previousTag: string | undefined;
  readonly commits: readonly Commit[];
  readonly images: readonly { readonly name: string; readonly ref: string; readonly digest: string }[];
  readonly chart: { readonly ref: string; readonly version: string; readonly digest: string };
}

/** One line of a subject: the first sentence when it is long (this repository's subjects are paragraphs). */
export function shortSubject(subject: string): string {
  if (subject.length <= MAX_SUBJECT) return subject;
  const cut = subject.slice(0, MAX_SUBJECT);
  const sentence = /^(.{40,}?[.;:])\s/.exec(cut);
  return `${(sentence?.[1] ?? cut).trimEnd()} …`;
}

export function releaseNotes(input: NotesInput): string {
  const since = input.previousTag === undefined ? 'the first commit' : input.previousTag;
  const lines = [
    `# PMEM-CSI ${input.version}`,
    '',
    '## Artifacts',
    '',
    ...input.images.map((i) => `- ${i.name}: \`${i.ref}@${i.digest}\``),
    `- Helm chart: \`helm install pmem-csi ${input.chart.ref} --version ${input.chart.version}\` (${input.chart.digest})`,
    '- SBOMs (SPDX JSON), signatures, kustomize bases pinned to the digests, the OLM bundle and release.json',
    '  (every artifact with its size and digest) are files of the release; verify with cosign.pub:',
    '  `cosign verify --key cosign.pub --insecure-ignore-tlog <image>@<digest>`.',
    '',
    `## Changes since ${since} (${input.commits.length} commits)`,
    '',
    ...input.commits.map((c) => `- ${shortSubject(c.subject)} (${c.sha.slice(0, 7)}, ${c.date})`),
    '',
  ];
  return lines.join('\n');
}
