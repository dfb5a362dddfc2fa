// Runs the driver in one of its two production modes with mutual TLS from the certificate files
// given on the command line (reloaded when they change). Returns a stop function.
// The peer's identity (DNS SAN) is checked by the interceptor that `serverCredentials` puts on the
// TCP servers' credentials, once per call before any handler; the services get no second
// `authorize` hook (it read and checked the same certificate again on every call).
// Each mode imports only its own package (a node never loads the controller, and the reverse): the
// module graph is most of the driver's start-up time.
import { NODE_CONTROLLER_SAN, REGISTRY_SAN } from '@pmem-csi/api';
import { DRIVER_VERSION } from '@pmem-csi/csi';
import {
  channelCredentialsFromSource,
  createProcessRegistry,
  grpcAddress,
  registerCertificateExpiry,
  serverCredentialsFromSource,
  TlsFileSource,
  type Logger,
  type TlsFiles,
} from '@pmem-csi/runtime';
import type { ControllerConfig, NodeConfig } from '@pmem-csi/csi';
import { controllerStatusSource, nodeStatusSource, serveStatus } from './status-http.js';

function tlsFiles(c: { caFile: string; certFile: string; keyFile: string }): TlsFiles {
  return { caFile: c.caFile, certFile: c.certFile, keyFile: c.keyFile };
}

/** Controller mode: registry (mTLS, accepts only node-controller certificates) + CSI controller. */
export async function runController(c: ControllerConfig, log: Logger): Promise<() => Promise<void>> {
  const { startController } = await import('@pmem-csi/controller');
  // One source of the pod's certificate files for its server and its clients: read, validated and
  // watched once.
  const tls = await TlsFileSource.open(tlsFiles(c), { logger: log });
  const registryCredentials = serverCredentialsFromSource(tls, { allowedClientSan: NODE_CONTROLLER_SAN });
  const nodeCredentials = channelCredentialsFromSource(tls, { expectedServerName: NODE_CONTROLLER_SAN });
  // One Prometheus registry for the process: process metrics, build_info, certificate expiry, the controller's series.
  const metrics = createProcessRegistry({ component: 'controller', version: DRIVER_VERSION });
  registerCertificateExpiry(metrics, [tls]);
  const controller = await startController({
    driverName: c.driverName,
    vendorVersion: DRIVER_VERSION,
    csiEndpoint: grpcAddress(c.csiEndpoint),
    registryAddress: c.registryListen,
    registryCredentials,
    nodeCredentials: () => nodeCredentials,
    leaseSeconds: c.leaseSeconds,
    log,
    metrics,
  });
  const status =
    c.metricsListen === ''
      ? undefined
      : await serveStatus(c.metricsListen, controllerStatusSource(controller)).catch(async (e: unknown) => {
          await controller.stop();
          throw e;
        });
  log.info('controller running', {
    csiEndpoint: c.csiEndpoint,
    registryPort: controller.registryPort,
    ...(status ? { status: status.url } : {}),
  });
  return async () => {
    await status?.close();
    await controller.stop();
  };
}

/** Node mode: CSI node service + node-controller (mTLS, accepts only the registry's certificate). */
export async function runNode(c: NodeConfig, log: Logger): Promise<() => Promise<void>> {
  const { startNodeDriver } = await import('@pmem-csi/node');
  const tls = await TlsFileSource.open(tlsFiles(c), { logger: log });
  const metrics = createProcessRegistry({ component: 'node', version: DRIVER_VERSION });
  registerCertificateExpiry(metrics, [tls]);
  const node = await startNodeDriver({
    driverName: c.driverName,
    nodeId: c.nodeId,
    deviceMode: c.deviceMode,
    deviceOptions: { pmemPercentage: c.pmemPercentage, emulatedSize: c.emulatedSize, fakeSize: c.emulatedSize },
    cxlRegions: c.cxlRegions,
    stateDir: c.stateDir,
    csiEndpoint: grpcAddress(c.csiEndpoint),
    nodeControllerAddress: c.nodeControllerListen,
    advertisedEndpoint: c.advertisedEndpoint,
    // One endpoint or several; each host resolved to every address: one registration per controller replica.
    registryAddress: c.registryEndpoint,
    serverCredentials: serverCredentialsFromSource(tls, { allowedClientSan: REGISTRY_SAN }),
    channelCredentials: channelCredentialsFromSource(tls, { expectedServerName: REGISTRY_SAN }),
    log,
    version: DRIVER_VERSION,
    metrics,
  });
  const status =
    c.metricsListen === ''
      ? undefined
      : await serveStatus(c.metricsListen, nodeStatusSource(node)).catch(async (e: unknown) => {
          await node.stop();
          throw e;
        });
  log.info('node driver running', {
    nodeId: c.nodeId,
    deviceMode: c.deviceMode,
    nodeControllerPort: node.nodeControllerPort,
    registry: c.registryEndpoint,
    ...(status ? { status: status.url } : {}),
  });
  return async () => {
    await status?.close();
    await node.stop();
  };
}
