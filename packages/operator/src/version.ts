// The operator's own version. Every object it builds records it (OPERATOR_VERSION_ANNOTATION in @pmem-csi/api names.ts), so that a
// newer operator recognises objects built by an older one and updates them in place. main.ts
// lets tests override it (the e2e upgrade scenario runs "version A" and "version B").

/** Version of this operator build; keep in step with packages/operator/package.json. */
export const OPERATOR_VERSION = '0.1.0';
