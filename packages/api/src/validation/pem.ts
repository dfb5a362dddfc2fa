// Shape checks of user-supplied PEM text (no cryptography: that is the operator's TLS handshake).
// Catches the usual mistakes early and with a clear message: a key pasted into a certificate
// field, an encrypted key that a pod could never use, base64 without the PEM armour.

const BLOCK_RE = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
const BASE64_LINE_RE = /^[A-Za-z0-9+/]+={0,2}$/;

export const CERTIFICATE_BLOCK_TYPES: readonly string[] = ['CERTIFICATE'];
/** PKCS#8, PKCS#1 (RSA) and SEC1 (EC). Encrypted keys are refused: nothing could decrypt them. */
export const PRIVATE_KEY_BLOCK_TYPES: readonly string[] = ['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY'];

interface PemBlock {
  readonly type: string;
  readonly wellFormed: boolean;
}

function pemBlocks(text: string): PemBlock[] {
  return Array.from(text.matchAll(BLOCK_RE), (m) => ({ type: m[1] ?? '', wellFormed: isBase64Body(m[2] ?? '') }));
}

// Only base64 lines: PEM headers ("Proc-Type: 4,ENCRYPTED") mean a legacy encrypted key.
function isBase64Body(body: string): boolean {
  const lines = body
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return lines.length > 0 && lines.every((l) => BASE64_LINE_RE.test(l));
}

/** One or more CERTIFICATE blocks (a chain is allowed) and nothing else. */
export function isPemCertificates(text: string): boolean {
  const blocks = pemBlocks(text);
  return blocks.length > 0 && blocks.every((b) => b.wellFormed && CERTIFICATE_BLOCK_TYPES.includes(b.type));
}

/** Exactly one unencrypted private key block. */
export function isPemPrivateKey(text: string): boolean {
  const blocks = pemBlocks(text);
  return blocks.length === 1 && blocks.every((b) => b.wellFormed && PRIVATE_KEY_BLOCK_TYPES.includes(b.type));
}
