{{/*
Helpers of the pmem-csi chart. Object names are fixed (pmem-csi-operator), not derived from the
release name: there is one operator per cluster (the CRD is cluster-scoped) and the kustomize base
deploy/kustomize/operator uses the same names, so both install paths yield the same objects
(e2e/src/deploy/agreement.test.ts compares them with packages/operator/src/render).
*/}}

{{- define "pmem-csi.operatorName" -}}pmem-csi-operator{{- end }}

{{/* [registry/]repository:tag; the tag defaults to the chart's appVersion. */}}
{{- define "pmem-csi.image" -}}
{{- $registry := trimSuffix "/" (.root.Values.imageRegistry | default "") -}}
{{- $tag := .image.tag | default .root.Chart.AppVersion -}}
{{- if $registry -}}
{{ printf "%s/%s:%s" $registry .image.repository $tag }}
{{- else -}}
{{ printf "%s:%s" .image.repository $tag }}
{{- end -}}
{{- end }}

{{- define "pmem-csi.operatorImage" -}}
{{ include "pmem-csi.image" (dict "root" . "image" .Values.operator.image) }}
{{- end }}

{{- define "pmem-csi.driverImage" -}}
{{ include "pmem-csi.image" (dict "root" . "image" .Values.driver.image) }}
{{- end }}

{{/* Labels of every object of the chart. */}}
{{- define "pmem-csi.commonLabels" -}}
app.kubernetes.io/part-of: pmem-csi
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* Selector of the operator pods. */}}
{{- define "pmem-csi.operatorSelectorLabels" -}}
app.kubernetes.io/name: {{ include "pmem-csi.operatorName" . }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "pmem-csi.operatorLabels" -}}
{{ include "pmem-csi.operatorSelectorLabels" . }}
{{ include "pmem-csi.commonLabels" . }}
{{- end }}

{{/* The subject of the operator's bindings. */}}
{{- define "pmem-csi.operatorSubjects" -}}
- kind: ServiceAccount
  name: {{ include "pmem-csi.operatorName" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}
