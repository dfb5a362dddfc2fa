// Command line of the QEMU tier's Kata boot, host side (e2e/qemu/harness.mjs runs it as root with
// `node --conditions=@pmem-csi/source --import tsx`):
//   make  <image>               an emulated volume with a Kata image file and data written through
//                               the runc-side loop device; the image copied to <image>, its facts
//                               to <image>.json (guest-kata.ts)
//   check <image> <guest.json>  after the guest ran: the file the guest wrote, read back on the host
// Prints one line starting with "kata-image: ok" or "kata-image: FAILED" and exits 0 or 1.
import { HostRunner } from '@pmem-csi/runtime';
import { checkGuestWrite, makeKataGuestImage } from './guest-kata.js';

async function main(argv: readonly string[]): Promise<string> {
  const runner = new HostRunner();
  const [command, image, guestJson] = argv;
  if (command === 'make' && image !== undefined) {
    const facts = await makeKataGuestImage(runner, image);
    return `made ${image}: ${facts.imageBytes} bytes, filesystem ${facts.dataBytes} bytes at 2 MiB, ${facts.payload} sha256 ${facts.payloadSha256}`;
  }
  if (command === 'check' && image !== undefined && guestJson !== undefined) {
    const wrote = await checkGuestWrite(runner, image, guestJson);
    return `the guest's ${wrote.file} (sha256 ${wrote.sha256}) reads back on the host from ${image}`;
  }
  throw new Error('usage: kata-image-cli.ts make <image> | check <image> <guest.json>');
}

main(process.argv.slice(2)).then(
  (line) => {
    process.stdout.write(`kata-image: ok: ${line}\n`);
  },
  (e: unknown) => {
    process.stdout.write(`kata-image: FAILED: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
