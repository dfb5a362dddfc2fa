// Node volume state: records in memory, made durable by a group-committed journal, reconciled at start-up.
export * from './atomic-file.js';
export * from './journal-format.js';
export * from './legacy-files.js';
export * from './reconcile.js';
export { readVolumeState } from './state-loader.js';
export * from './volume-record.js';
export * from './volume-store.js';
