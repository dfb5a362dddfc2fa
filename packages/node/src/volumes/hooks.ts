// Observation points inside volume creation and deletion, and inside the staging of a Kata
// Containers volume (issue 26: after the image file's header, before its filesystem; after the
// complete image, before its loop device). Production passes no hooks; the restart
// test's entry script (testing/node-process.ts) passes one that SIGKILLs the process at a chosen
// step, to prove that intent-first records plus start-up reconcile survive a crash anywhere.

/** Steps at which a hook is called, in the order they happen. */
export type VolumeStep =
  'create:after-record' | 'create:after-device' | 'delete:after-device' | 'kata:image-partial' | 'kata:after-image';
export const VOLUME_STEPS: readonly VolumeStep[] = [
  'create:after-record',
  'create:after-device',
  'delete:after-device',
  'kata:image-partial',
  'kata:after-image',
];

export interface VolumeHooks {
  /** Called synchronously when `step` has been done for `volumeId`. */
  reached(step: VolumeStep, volumeId: string): void;
}
