// Which client connections of a server are open, so that something can be bound to a connection
// and end when it closes: the controller binds a node's registration lease to the connection the
// node registered over (packages/controller/src/registry/node-registry.ts), so that a node that
// keeps its connection renews rarely and one whose connection closes loses its lease soon.
//
// A connection is known by its peer string, the form grpc-js's `call.getPeer()` gives inside a
// handler: "<remote address>:<remote port>" (IPv6 addresses unbracketed, as Node.js reports them).
// Only connections that bindServer accepts itself (a TCP address with a `backlog`) are tracked; a
// peer that is not tracked is simply not open here, and whatever would be bound to it falls back to
// its own expiry.
//
// A peer that vanishes without closing (power loss, a cut cable) is found by TCP keepalive: the
// kernel probes a connection idle for `keepAliveMs`, once a second, and resets it after 10 probes go
// unanswered (libuv sets TCP_KEEPIDLE, TCP_KEEPINTVL 1 and TCP_KEEPCNT 10), so a dead peer's
// connection closes ~keepAliveMs + 10 s after its last traffic, at no cost to this process.
import type { Socket } from 'node:net';

/** What a holder of bindings needs to know about connections. */
export interface ConnectionWatch {
  /** Whether the connection of `peer` (grpc-js `call.getPeer()`) is open and tracked. */
  isOpen(peer: string): boolean;
  /**
   * Call `listener` once when the connection of `peer` closes. Returns the function that cancels
   * it, or undefined when that connection is not open (nothing is registered then).
   */
  onClose(peer: string, listener: () => void): (() => void) | undefined;
}

/** Idle time (ms) before the kernel probes a connection (see the header). */
export const DEFAULT_KEEPALIVE_MS = 20_000;

export interface ConnectionTrackerOptions {
  /** Idle time before TCP keepalive probes start (default DEFAULT_KEEPALIVE_MS). */
  readonly keepAliveMs?: number;
}

/** The peer string of a socket as grpc-js forms it, or undefined when it has no remote address. */
export function peerOf(socket: Socket): string | undefined {
  const address = socket.remoteAddress;
  if (address === undefined) return undefined;
  return socket.remotePort === undefined ? address : `${address}:${socket.remotePort}`;
}

export class ConnectionTracker implements ConnectionWatch {
  /** Open connections by peer, with the listeners waiting for their close (most have none or one). */
  readonly #open = new Map<string, Set<() => void> | null>();
  readonly #keepAliveMs: number;

  constructor(options: ConnectionTrackerOptions = {}) {
    const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEPALIVE_MS;
    if (!Number.isInteger(keepAliveMs) || keepAliveMs < 1000)
      throw new RangeError(`keepAliveMs must be an integer of at least 1000, got ${keepAliveMs}`);
    this.#keepAliveMs = keepAliveMs;
  }

  /** Number of open tracked connections. */
  get size(): number {
    return this.#open.size;
  }

  /** Track an accepted connection until it closes (and turn on TCP keepalive for it). */
  attach(socket: Socket): void {
    const peer = peerOf(socket);
    if (peer === undefined || socket.destroyed) return; // already gone: nothing to bind to it
    socket.setKeepAlive(true, this.#keepAliveMs);
    this.#open.set(peer, null);
    socket.once('close', () => {
      const listeners = this.#open.get(peer);
      this.#open.delete(peer);
      for (const listener of listeners ?? []) listener();
    });
  }

  isOpen(peer: string): boolean {
    return this.#open.has(peer);
  }

  onClose(peer: string, listener: () => void): (() => void) | undefined {
    if (!this.#open.has(peer)) return undefined;
    let listeners = this.#open.get(peer);
    if (listeners === null || listeners === undefined) {
      listeners = new Set();
      this.#open.set(peer, listeners);
    }
    const set = listeners;
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }
}
