import {
  DEFAULT_DRIVER_NAME,
  deploymentObjectNames,
  driverHostPaths,
  FIELD_MANAGER,
  METRICS_PORT,
  NODE_CONTROLLER_PORT,
  NODE_CONTROLLER_SAN,
  objectLabels,
  objectNamePrefix,
  objectNamesCollide,
  OPERATOR_LEASE_NAME,
  provisionerLeaseName,
  resizerLeaseName,
  REGISTRY_PORT,
  REGISTRY_SAN,
  registryServiceHost,
  SECRET_KEYS,
  selectorLabels,
  topologyKey,
} from './names.js';
import { isDnsSubdomain } from './validation/syntax.js';

describe('driver constants', () => {
  it('keeps the values existing clusters and volumes depend on', () => {
    expect(DEFAULT_DRIVER_NAME).toBe('pmem-csi.intel.com');
    expect(topologyKey(DEFAULT_DRIVER_NAME)).toBe('pmem-csi.intel.com/node');
    expect(REGISTRY_PORT).toBe(10000);
    expect(NODE_CONTROLLER_PORT).toBe(10001);
    expect(METRICS_PORT).toBe(10010);
    expect(REGISTRY_SAN).toBe('pmem-registry');
    expect(NODE_CONTROLLER_SAN).toBe('pmem-node-controller');
    expect(SECRET_KEYS).toEqual({ caCert: 'ca.crt', cert: 'tls.crt', key: 'tls.key' });
  });
});

describe('deploymentObjectNames', () => {
  it('names every object of the default deployment like the Go operator did', () => {
    expect(objectNamePrefix('pmem-csi.intel.com')).toBe('pmem-csi-intel-com');
    expect(deploymentObjectNames('pmem-csi.intel.com')).toEqual({
      driverName: 'pmem-csi.intel.com',
      csiDriver: 'pmem-csi.intel.com',
      registrySecret: 'pmem-csi-intel-com-registry-secrets',
      nodeSecret: 'pmem-csi-intel-com-node-secrets',
      caSecret: 'pmem-csi-intel-com-ca',
      controllerServiceAccount: 'pmem-csi-intel-com-controller',
      nodeServiceAccount: 'pmem-csi-intel-com-node',
      controllerDeployment: 'pmem-csi-intel-com-controller',
      nodeDaemonSet: 'pmem-csi-intel-com-node',
      controllerDisruptionBudget: 'pmem-csi-intel-com-controller',
      registryService: 'pmem-csi-intel-com-controller',
      metricsService: 'pmem-csi-intel-com-metrics',
      provisionerRole: 'pmem-csi-intel-com-external-provisioner-cfg',
      provisionerRoleBinding: 'pmem-csi-intel-com-csi-provisioner-role-cfg',
      provisionerClusterRole: 'pmem-csi-intel-com-external-provisioner-runner',
      provisionerClusterRoleBinding: 'pmem-csi-intel-com-csi-provisioner-role',
      resizerRole: 'pmem-csi-intel-com-external-resizer-cfg',
      resizerRoleBinding: 'pmem-csi-intel-com-csi-resizer-role-cfg',
      resizerClusterRole: 'pmem-csi-intel-com-external-resizer-runner',
      resizerClusterRoleBinding: 'pmem-csi-intel-com-csi-resizer-role',
      driverClusterRole: 'pmem-csi-intel-com-driver-runner',
      driverClusterRoleBinding: 'pmem-csi-intel-com-driver-role',
    });
  });

  it('keeps Service names valid DNS labels for the longest allowed CR name (52 characters)', () => {
    const longest = `a${'.b'.repeat(25)}c`;
    expect(longest).toHaveLength(52);
    const names = deploymentObjectNames(longest);
    for (const service of [names.registryService, names.metricsService]) {
      expect(service).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?$/);
      expect(service.length).toBeLessThanOrEqual(63);
    }
    for (const name of Object.values(names)) expect(isDnsSubdomain(name)).toBe(true);
  });
});

describe('objectNamesCollide', () => {
  /** The object names of CR `crName`, without the CSIDriver (named after the CR itself). */
  const objectNames = (crName: string): string[] =>
    Object.entries(deploymentObjectNames(crName))
      .filter(([key]) => key !== 'driverName' && key !== 'csiDriver')
      .map(([, name]) => name);

  it('is true exactly for two different CR names with the same prefix', () => {
    expect(objectNamesCollide('pmem-csi.intel.com', 'pmem-csi-intel-com')).toBe(true);
    expect(objectNamesCollide('pmem.csi.intel.com', 'pmem-csi.intel-com')).toBe(true);
    expect(objectNamesCollide('pmem-csi.intel.com', 'pmem-csi.intel.com')).toBe(false);
    expect(objectNamesCollide('pmem-csi.intel.com', 'pmem-csi.intel.org')).toBe(false);
    expect(objectNames('pmem-csi.intel.com')).toEqual(objectNames('pmem-csi-intel-com'));
  });

  it('different prefixes never share an object name: CRs whose prefixes extend each other by the head of a suffix', () => {
    // "<p>-<head>" + "<tail>" = "<p>" + "-<head><tail>": the only way two prefixes can meet.
    const suffixes = [...new Set(objectNames('p').map((n) => n.slice(1)))];
    let pairs = 0;
    for (const suffix of suffixes) {
      for (let i = 1; i < suffix.length; i++) {
        if (suffix[i] !== '-') continue;
        const longer = `p${suffix.slice(0, i)}`;
        const shared = objectNames(longer).filter((n) => objectNames('p').includes(n));
        expect([longer, shared]).toEqual([longer, []]);
        expect(objectNamesCollide('p', longer)).toBe(false);
        pairs++;
      }
    }
    expect(pairs).toBe(22);
  });
});

describe('driverHostPaths', () => {
  it('derives the host paths from the driver name and the kubelet directory', () => {
    expect(driverHostPaths('pmem-csi.intel.com')).toEqual({
      stateDir: '/var/lib/pmem-csi.intel.com',
      pluginDir: '/var/lib/kubelet/plugins/pmem-csi.intel.com',
      csiSocket: '/var/lib/kubelet/plugins/pmem-csi.intel.com/csi.sock',
      registrationDir: '/var/lib/kubelet/plugins_registry',
      podsDir: '/var/lib/kubelet/pods',
      csiStagingDir: '/var/lib/kubelet/plugins/kubernetes.io/csi',
    });
  });

  it('honours a custom kubeletDir, with or without a trailing slash', () => {
    expect(driverHostPaths('other.example.com', '/var/snap/microk8s/common/var/lib/kubelet/')).toEqual({
      stateDir: '/var/lib/other.example.com',
      pluginDir: '/var/snap/microk8s/common/var/lib/kubelet/plugins/other.example.com',
      csiSocket: '/var/snap/microk8s/common/var/lib/kubelet/plugins/other.example.com/csi.sock',
      registrationDir: '/var/snap/microk8s/common/var/lib/kubelet/plugins_registry',
      podsDir: '/var/snap/microk8s/common/var/lib/kubelet/pods',
      csiStagingDir: '/var/snap/microk8s/common/var/lib/kubelet/plugins/kubernetes.io/csi',
    });
  });
});

describe('registryServiceHost', () => {
  it('is the registry Service in the given namespace', () => {
    expect(registryServiceHost('pmem-csi.intel.com', 'pmem-csi')).toBe('pmem-csi-intel-com-controller.pmem-csi.svc');
  });
});

describe('provisionerLeaseName', () => {
  it("is the driver name as external-provisioner's leader election names its Lease", () => {
    expect(provisionerLeaseName('pmem-csi.intel.com')).toBe('pmem-csi-intel-com');
    expect(provisionerLeaseName('example.com/pmem')).toBe('example-com-pmem');
    expect(provisionerLeaseName('Upper_Case.io')).toBe('Upper-Case-io');
    expect(provisionerLeaseName('trailing.')).toBe('trailing-X');
  });

  it('equals the object name prefix for every valid driver name', () => {
    for (const name of ['a', 'pmem-csi.intel.com', 'a.b.c', 'x'.repeat(52), 'a-b.c-d'])
      expect(provisionerLeaseName(name)).toBe(objectNamePrefix(name));
  });
});

describe('resizerLeaseName', () => {
  it("is the driver name as external-resizer's leader election names its Lease", () => {
    expect(resizerLeaseName('pmem-csi.intel.com')).toBe('external-resizer-pmem-csi-intel-com');
    expect(resizerLeaseName('example.com/pmem')).toBe('external-resizer-example-com-pmem');
    expect(resizerLeaseName('Upper_Case.io')).toBe('external-resizer-Upper-Case-io');
    expect(resizerLeaseName('trailing.')).toBe('external-resizer-trailing-X');
  });

  it("is neither the operator's Lease nor the driver's own provisioner Lease", () => {
    for (const name of ['pmem-csi-operator', 'pmem-csi.intel.com', 'external-resizer', 'a']) {
      expect([name, resizerLeaseName(name)]).not.toEqual([name, OPERATOR_LEASE_NAME]);
      expect([name, resizerLeaseName(name)]).not.toEqual([name, provisionerLeaseName(name)]);
    }
  });

  it('is the provisioner Lease of a driver whose name is "external-resizer." and this one', () => {
    expect(resizerLeaseName('foo.example.com')).toBe(provisionerLeaseName('external-resizer.foo.example.com'));
  });
});

describe('labels', () => {
  it('selects one component of one deployment', () => {
    expect(selectorLabels('pmem-csi.intel.com', 'node')).toEqual({
      'app.kubernetes.io/name': 'pmem-csi',
      'app.kubernetes.io/instance': 'pmem-csi.intel.com',
      'app.kubernetes.io/component': 'node',
    });
  });

  it('adds user labels to the operator labels, and the operator labels win', () => {
    expect(objectLabels('x.example.com', 'controller', { team: 'storage', 'app.kubernetes.io/name': 'mine' })).toEqual({
      team: 'storage',
      'app.kubernetes.io/name': 'pmem-csi',
      'app.kubernetes.io/instance': 'x.example.com',
      'app.kubernetes.io/component': 'controller',
      'app.kubernetes.io/part-of': 'pmem-csi',
      'app.kubernetes.io/managed-by': FIELD_MANAGER,
    });
    expect(objectLabels('x.example.com', undefined)).not.toHaveProperty(['app.kubernetes.io/component']);
  });
});
