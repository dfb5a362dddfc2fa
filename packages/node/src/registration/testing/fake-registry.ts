// An in-process registry server (pmemcsi.registry.v1) for registrar and node-driver tests: records
// registrations and calls, answers renewals of unknown registrations with NOT_FOUND like the real
// controller after a restart, and can be told to hang (to provoke deadlines). Insecure credentials
// unless others are given; any loopback address (127.0.0.2, ... stand for replicas behind one name).
import * as grpc from '@grpc/grpc-js';
import {
  adaptService,
  bindServer,
  loadRegistry,
  nullLogger,
  shutdownServer,
  type RegistryHandlers,
} from '@pmem-csi/runtime';
import { NotFoundError, type registry } from '@pmem-csi/csi';

export interface FakeRegistration {
  readonly registrationId: string;
  readonly request: registry.RegisterControllerRequest__Output;
}

export class FakeRegistry {
  readonly registrations = new Map<string, FakeRegistration>();
  readonly calls: Array<{ readonly method: string; readonly request: unknown }> = [];
  /** The :authority of every call, in order (what the client named as the server). */
  readonly authorities: string[] = [];
  /** Lease handed out (seconds). */
  leaseSeconds = 1;
  /** When set, RegisterController never answers (the client's deadline fires). */
  hang = false;
  #next = 1;
  #server: grpc.Server | undefined;
  port = 0;
  host = '127.0.0.1';

  /** Listen on `host`:`port` (0 = any free port; host default 127.0.0.1). */
  async start(
    port = 0,
    options: { readonly host?: string; readonly credentials?: grpc.ServerCredentials } = {},
  ): Promise<this> {
    const server = new grpc.Server();
    server.addService(loadRegistry().pmemcsi.registry.v1.Registry.service, this.#handlers());
    this.host = options.host ?? '127.0.0.1';
    this.port = await bindServer(
      server,
      `${this.host}:${port}`,
      options.credentials ?? grpc.ServerCredentials.createInsecure(),
    );
    this.#server = server;
    return this;
  }

  get address(): string {
    return `${this.host}:${this.port}`;
  }

  /** Stop at once (like a killed controller). */
  async stop(): Promise<void> {
    const s = this.#server;
    this.#server = undefined;
    if (s !== undefined) await shutdownServer(s, 0);
  }

  callsOf(method: string): unknown[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.request);
  }

  #handlers(): RegistryHandlers {
    return adaptService<RegistryHandlers>(
      'Registry',
      loadRegistry().pmemcsi.registry.v1.Registry.service,
      {
        RegisterController: async (req, ctx) => {
          this.calls.push({ method: 'RegisterController', request: req });
          if (this.hang) await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
          const registrationId = `reg-${this.#next++}`;
          this.registrations.set(req.node_id, { registrationId, request: req });
          return { registration_id: registrationId, lease_seconds: String(this.leaseSeconds) };
        },
        RenewController: async (req) => {
          this.calls.push({ method: 'RenewController', request: req });
          if (this.registrations.get(req.node_id)?.registrationId !== req.registration_id) {
            throw new NotFoundError(`node ${req.node_id} has no registration ${req.registration_id}; register again`);
          }
          return { lease_seconds: String(this.leaseSeconds) };
        },
        UnregisterController: async (req) => {
          this.calls.push({ method: 'UnregisterController', request: req });
          this.registrations.delete(req.node_id);
          return {};
        },
      },
      { log: nullLogger, authorize: (call) => void this.authorities.push(call.getHost()) },
    );
  }
}
