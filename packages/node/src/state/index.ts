// Node volume state: persistent per-volume records, written atomically, reconciled at start-up.
export * from './atomic-file.js';
export * from './reconcile.js';
export * from './volume-record.js';
export * from './volume-store.js';
