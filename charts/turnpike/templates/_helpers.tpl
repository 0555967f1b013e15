{{/* Chart name, truncated to 63 characters (a label value's limit). */}}
{{- define "turnpike.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-qualified name; a component's suffix is added by turnpike.component. */}}
{{- define "turnpike.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The name of one component: (dict "root" $ "component" "relay"). */}}
{{- define "turnpike.component" -}}
{{- printf "%s-%s" (include "turnpike.fullname" .root | trunc 50 | trimSuffix "-") .component -}}
{{- end -}}

{{- define "turnpike.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "turnpike.labels" -}}
helm.sh/chart: {{ include "turnpike.chart" . }}
app.kubernetes.io/name: {{ include "turnpike.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: turnpike
{{- end -}}

{{/* Labels of one component's objects: (dict "root" $ "component" "relay"). */}}
{{- define "turnpike.componentLabels" -}}
{{ include "turnpike.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Selector labels of one component: stable across upgrades, so never the version. */}}
{{- define "turnpike.selectorLabels" -}}
app.kubernetes.io/name: {{ include "turnpike.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "turnpike.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The Secret holding SESSION_SECRET, CRYPTO_SECRET (and METRICS_TOKEN). */}}
{{- define "turnpike.secretName" -}}
{{- default (include "turnpike.component" (dict "root" . "component" "secrets")) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* Whether the bundled PostgreSQL / Redis run: enabled and no external one given. */}}
{{- define "turnpike.bundledPostgres" -}}
{{- if and .Values.database.bundled.enabled (not .Values.database.url) (not .Values.database.existingSecret) -}}true{{- end -}}
{{- end -}}
{{- define "turnpike.bundledRedis" -}}
{{- if and .Values.redis.bundled.enabled (not .Values.redis.url) (not .Values.redis.existingSecret) -}}true{{- end -}}
{{- end -}}

{{/* The Secret and key of DATABASE_URL / REDIS_URL. */}}
{{- define "turnpike.databaseSecret" -}}
{{- if .Values.database.existingSecret -}}{{ .Values.database.existingSecret }}{{- else -}}{{ include "turnpike.component" (dict "root" . "component" "connections") }}{{- end -}}
{{- end -}}
{{- define "turnpike.databaseKey" -}}
{{- if .Values.database.existingSecret -}}{{ .Values.database.existingSecretKey }}{{- else -}}DATABASE_URL{{- end -}}
{{- end -}}
{{- define "turnpike.redisSecret" -}}
{{- if .Values.redis.existingSecret -}}{{ .Values.redis.existingSecret }}{{- else -}}{{ include "turnpike.component" (dict "root" . "component" "connections") }}{{- end -}}
{{- end -}}
{{- define "turnpike.redisKey" -}}
{{- if .Values.redis.existingSecret -}}{{ .Values.redis.existingSecretKey }}{{- else -}}REDIS_URL{{- end -}}
{{- end -}}
{{- define "turnpike.hasRedis" -}}
{{- if or .Values.redis.url .Values.redis.existingSecret (include "turnpike.bundledRedis" .) -}}true{{- end -}}
{{- end -}}

{{/* Fails the render when no database is configured: several pods cannot share an embedded one. */}}
{{- define "turnpike.requireDatabase" -}}
{{- if not (or .Values.database.url .Values.database.existingSecret (include "turnpike.bundledPostgres" .)) -}}
{{- fail "turnpike needs PostgreSQL on Kubernetes: set database.url, database.existingSecret or database.bundled.enabled" -}}
{{- end -}}
{{- end -}}

{{/* Environment shared by every role: (dict "root" $ "role" "relay"). */}}
{{- define "turnpike.env" -}}
{{- $root := .root -}}
{{- if ne .role "operator" }}
- name: ROLE
  value: {{ .role | quote }}
{{- end }}
- name: PORT
  value: "3000"
- name: DATA_DIR
  value: /tmp/turnpike
- name: LOG_LEVEL
  value: {{ $root.Values.config.logLevel | quote }}
- name: TRUST_PROXY
  value: {{ $root.Values.config.trustProxy | quote }}
- name: SYNC_FREQUENCY
  value: {{ $root.Values.config.syncFrequencySeconds | quote }}
- name: SHUTDOWN_GRACE_SECONDS
  value: {{ (eq .role "relay") | ternary $root.Values.relay.drainSeconds $root.Values.config.shutdownGraceSeconds | quote }}
- name: SESSION_SECRET
  valueFrom: {secretKeyRef: {name: {{ include "turnpike.secretName" $root }}, key: SESSION_SECRET}}
- name: CRYPTO_SECRET
  valueFrom: {secretKeyRef: {name: {{ include "turnpike.secretName" $root }}, key: CRYPTO_SECRET}}
{{- if $root.Values.metrics.token }}
- name: METRICS_TOKEN
  valueFrom: {secretKeyRef: {name: {{ include "turnpike.secretName" $root }}, key: METRICS_TOKEN}}
{{- end }}
- name: DATABASE_URL
  valueFrom: {secretKeyRef: {name: {{ include "turnpike.databaseSecret" $root }}, key: {{ include "turnpike.databaseKey" $root }}}}
{{- if include "turnpike.hasRedis" $root }}
- name: REDIS_URL
  valueFrom: {secretKeyRef: {name: {{ include "turnpike.redisSecret" $root }}, key: {{ include "turnpike.redisKey" $root }}}}
- name: REDIS_KEY_PREFIX
  value: {{ $root.Values.redis.keyPrefix | quote }}
{{- end }}
{{- if and (eq .role "api") $root.Values.config.updateCheckUrl }}
- name: UPDATE_CHECK_URL
  value: {{ $root.Values.config.updateCheckUrl | quote }}
{{- end }}
{{- range $name, $value := $root.Values.config.extraEnv }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}

{{/* Soft spread over zones and nodes. */}}
{{- define "turnpike.topologySpread" -}}
{{- if .root.Values.topologySpread.enabled }}
topologySpreadConstraints:
  {{- range list "topology.kubernetes.io/zone" "kubernetes.io/hostname" }}
  - maxSkew: {{ $.root.Values.topologySpread.maxSkew }}
    topologyKey: {{ . }}
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "turnpike.selectorLabels" $ | nindent 8 }}
  {{- end }}
{{- end }}
{{- end -}}

{{/* Writable scratch space: the root filesystem is read-only. */}}
{{- define "turnpike.tmpVolume" -}}
- name: tmp
  emptyDir: {sizeLimit: 1Gi}
{{- end -}}

{{/* The bundled PostgreSQL's password: kept from the cluster, else generated (call once per render). */}}
{{- define "turnpike.bundledPostgresPassword" -}}
{{- $name := include "turnpike.component" (dict "root" . "component" "connections") -}}
{{- $current := (lookup "v1" "Secret" .Release.Namespace $name).data | default dict -}}
{{- get $current "POSTGRES_PASSWORD" | b64dec | default (randAlphaNum 32) -}}
{{- end -}}

{{/* Path prefixes served by the relays; everything else goes to the api (console and /api). */}}
{{- define "turnpike.relayPaths" -}}
{{- toJson (list "/v1" "/v1beta" "/pg" "/mj" "/suno" "/dashboard") -}}
{{- end -}}
