// One Prometheus registry per process (prom-client), never prom-client's global default registry:
// every component (controller, node, operator) makes its own with `createProcessRegistry`, so
// tests that start several components in one process do not see each other's series. The
// registry carries the default process metrics (CPU, memory, handles, event loop lag, GC, under
// prom-client's standard names) and `pmem_csi_build_info{component,version,node_version} 1`.
// Services register their own series on it; /metrics renders it with `metricsText`.
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/** The content type of the text exposition format that `metricsText` renders. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** The series every component has; the dashboard and the alert rules rely on these names. */
export const BUILD_INFO = 'pmem_csi_build_info';

export interface ProcessRegistryOptions {
  /** The component: "controller", "node", "operator". */
  readonly component: string;
  /** The version the binary reports. */
  readonly version: string;
  /** Default process metrics (default true; tests that only look at their own series may turn them off). */
  readonly processMetrics?: boolean;
}

/** A new registry with build_info and (unless turned off) the default process metrics. */
export function createProcessRegistry(options: ProcessRegistryOptions): Registry {
  if (options.component === '') throw new TypeError('createProcessRegistry: component must not be empty');
  if (options.version === '') throw new TypeError('createProcessRegistry: version must not be empty');
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  const info = new Gauge({
    name: BUILD_INFO,
    help: 'Always 1; the labels name the component, its version and the Node.js version it runs on.',
    labelNames: ['component', 'version', 'node_version'] as const,
    registers: [registry],
  });
  info.set({ component: options.component, version: options.version, node_version: process.version }, 1);
  return registry;
}

/**
 * The Prometheus text exposition of `registry`. prom-client 15 writes a NaN value as "Nan"; the
 * format's spelling is "NaN" (Prometheus itself parses either, stricter parsers — OpenMetrics, our
 * cluster tier — only "NaN"). Seen on nodejs_eventloop_lag_* right after start, before any sample.
 */
export async function metricsText(registry: Registry): Promise<string> {
  return (await registry.metrics()).replace(/ Nan$/gm, ' NaN');
}

/** Names of every series registered on `registry` (metric family names, as in `# TYPE` lines). */
export function registeredNames(registry: Registry): string[] {
  return registry.getMetricsAsArray().map((m) => m.name);
}
