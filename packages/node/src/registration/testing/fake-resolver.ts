// A RegistryResolver for tests: names map to the addresses a test sets, and change when it says
// so; an unknown name, or one set to an Error, fails like a DNS lookup that found nothing.
import type { RegistryResolver } from '../resolver.js';

export class FakeResolver implements RegistryResolver {
  readonly #names = new Map<string, readonly string[] | Error>();
  /** Every lookup, in order. */
  readonly lookups: string[] = [];

  /** Make `host` resolve to `addresses` (or fail with `addresses` when it is an Error). */
  set(host: string, addresses: readonly string[] | Error): this {
    this.#names.set(host, addresses);
    return this;
  }

  resolve(host: string): Promise<readonly string[]> {
    this.lookups.push(host);
    const found = this.#names.get(host);
    if (found === undefined) return Promise.reject(new Error(`getaddrinfo ENOTFOUND ${host}`));
    if (found instanceof Error) return Promise.reject(found);
    return Promise.resolve(found);
  }
}
