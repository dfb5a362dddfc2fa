// values.schema.json of the Helm chart, generated so that `deployment.spec` is checked by the very
// schema the CRD uses (packages/api, the one source), and so that Helm refuses unknown keys (a
// typo in values would otherwise be ignored in silence). Helm applies the schema on install,
// upgrade, lint and template. Every key here is documented in values.yaml (a unit test checks that
// the two list the same keys).
import {
  DRIVER_NAME_MAX_LENGTH,
  DRIVER_NAME_PATTERN,
  LOG_FORMATS,
  pmemCsiDeploymentSchema,
  type JSONSchemaProps,
} from '@pmem-csi/api';

type Schema = { [key: string]: unknown };

/** A Prometheus duration as monitors take it: 30s, 1m, 1m30s, 500ms. */
const PROMETHEUS_DURATION = '^([0-9]+(ms|s|m|h|d|w|y))+$';

/** The JSON Schema subset of a CRD schema node: no x-kubernetes-* or OpenAPI-only formats. */
export function plainJsonSchema(node: JSONSchemaProps): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-') || key === 'format') continue;
    if (key === 'properties')
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, JSONSchemaProps>).map(([k, v]) => [k, plainJsonSchema(v)]),
      );
    else if (key === 'additionalProperties' || key === 'items') out[key] = plainJsonSchema(value as JSONSchemaProps);
    else if (key === 'anyOf') out[key] = (value as JSONSchemaProps[]).map(plainJsonSchema);
    else out[key] = value;
  }
  return out;
}

const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
const bool = (description: string): Schema => ({ type: 'boolean', description });
const obj = (description: string, properties: Record<string, Schema>): Schema => ({
  type: 'object',
  description,
  additionalProperties: false,
  properties,
});
const stringMap = (description: string): Schema => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string' },
});
const freeObject = (description: string): Schema => ({ type: 'object', description });

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

function image(what: string, withPullPolicy: boolean): Schema {
  const properties: Record<string, Schema> = {
    repository: str(`Repository of the ${what} image, without registry (see imageRegistry).`, { minLength: 1 }),
    tag: str('Image tag; "" means the chart\'s appVersion.'),
  };
  if (withPullPolicy)
    properties['pullPolicy'] = str('Image pull policy.', { enum: ['Always', 'IfNotPresent', 'Never'] });
  return obj(`The ${what} image.`, properties);
}

function specSchema(): Schema {
  const spec = pmemCsiDeploymentSchema.properties?.['spec'];
  if (spec === undefined) throw new Error('values schema: the CRD schema has no spec');
  return { ...plainJsonSchema(spec), additionalProperties: false };
}

/** The chart's values.schema.json. */
export function helmValuesSchema(): Schema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Values of the pmem-csi Helm chart',
    type: 'object',
    additionalProperties: false,
    properties: {
      global: freeObject('Values shared with a parent chart (unused by this chart).'),
      imageRegistry: str(
        'Registry prepended to the operator and driver image repositories, e.g. "registry.example.com/pmem"; "" uses the repositories as they are.',
      ),
      operator: obj('The PMEM-CSI operator, installed in the release namespace.', {
        image: image('operator', true),
        imagePullSecrets: {
          type: 'array',
          description: 'Secrets for pulling the operator image.',
          items: obj('A Secret reference.', { name: str('Secret name.') }),
        },
        replicas: {
          type: 'integer',
          minimum: 1,
          description: 'Operator pods; leader election lets one reconcile, the others stand by.',
        },
        logFormat: str('Log format of the operator.', { enum: [...LOG_FORMATS] }),
        logLevel: str('Log level of the operator.', { enum: ['debug', 'info', 'warn', 'error'] }),
        resources: freeObject('Compute resources of the operator container.'),
        nodeSelector: stringMap('Node labels for the operator pods.'),
        tolerations: { type: 'array', description: 'Tolerations of the operator pods.', items: { type: 'object' } },
        affinity: freeObject('Affinity of the operator pods.'),
        priorityClassName: str('PriorityClass of the operator pods; "" for none.'),
        podAnnotations: stringMap('Extra annotations of the operator pods.'),
      }),
      driver: obj('Where and with which image the operator deploys drivers.', {
        namespace: str('Namespace of every driver the operator deploys (and of its leader-election Lease).', {
          pattern: DNS_LABEL,
          maxLength: 63,
        }),
        createNamespace: bool(
          'Create the driver namespace (kept on uninstall: helm.sh/resource-policy keep), unless it is the release namespace.',
        ),
        image: image('driver', false),
      }),
      deployment: obj('An optional PmemCSIDeployment (one driver) created by the chart.', {
        create: bool('Create the PmemCSIDeployment.'),
        name: str('Its name, which is the CSI driver name.', {
          pattern: DRIVER_NAME_PATTERN,
          maxLength: DRIVER_NAME_MAX_LENGTH,
        }),
        deleteOnUninstall: bool('Delete it (and so the driver) on helm uninstall; by default it is kept.'),
        spec: specSchema(),
      }),
      monitoring: obj('Monitoring with the Prometheus operator.', {
        prometheusRule: obj('A PrometheusRule with the alerts of deploy/prometheus/pmem-csi-rules.yaml.', {
          enabled: bool("Create a PrometheusRule with PMEM-CSI's alerts."),
          namespace: str('Namespace of the PrometheusRule; empty means the release namespace.'),
          labels: stringMap('Extra labels of the PrometheusRule.'),
        }),
        serviceMonitor: obj("A ServiceMonitor for the controller's metrics Service in the driver namespace.", {
          enabled: bool('Create the ServiceMonitor.'),
          namespace: str('Namespace of the ServiceMonitor; empty means the release namespace.'),
          labels: stringMap('Extra labels of the ServiceMonitor (the serviceMonitorSelector of your Prometheus).'),
          interval: str('Scrape interval, a Prometheus duration such as 30s or 1m.', { pattern: PROMETHEUS_DURATION }),
        }),
        podMonitor: obj('PodMonitors for the node driver pods (driver namespace) and the operator pods.', {
          enabled: bool('Create the PodMonitors.'),
          namespace: str('Namespace of the PodMonitors; empty means the release namespace.'),
          labels: stringMap('Extra labels of the PodMonitors (the podMonitorSelector of your Prometheus).'),
          interval: str('Scrape interval, a Prometheus duration such as 30s or 1m.', { pattern: PROMETHEUS_DURATION }),
        }),
      }),
    },
  };
}
