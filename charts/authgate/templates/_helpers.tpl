{{/*
Chart name, truncated to the 63 characters a label value allows.
*/}}
{{- define "authgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: the release name, suffixed with the chart name unless it already contains it.
Kept to 57 characters so that "<fullname>-ops" and "<fullname>-dashboard" still fit in 63.
*/}}
{{- define "authgate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 57 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 57 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 57 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "authgate.opsServiceName" -}}
{{- printf "%s-ops" (include "authgate.fullname" .) }}
{{- end }}

{{- define "authgate.authzServiceName" -}}
{{- printf "%s-authz" (include "authgate.fullname" .) }}
{{- end }}

{{- define "authgate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels the pods are selected by. Never change these: a Deployment's selector is immutable.
*/}}
{{- define "authgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "authgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Labels on every object.
*/}}
{{- define "authgate.labels" -}}
helm.sh/chart: {{ include "authgate.chart" . }}
{{ include "authgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: authgate
{{- end }}

{{- define "authgate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "authgate.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The Secret the pods read their secret settings from.
*/}}
{{- define "authgate.secretName" -}}
{{- default (include "authgate.fullname" .) .Values.existingSecret }}
{{- end }}

{{/*
Where the identity keys are mounted (deployment.yaml) and read from (configmap.yaml).
*/}}
{{- define "authgate.identityDir" -}}
/etc/authgate/identity
{{- end }}

{{/*
How many further published identity keys the Secret holds: from secrets.identityPublishedKeys, or
identity.existingSecretPublishedKeys with existingSecret.
*/}}
{{- define "authgate.identityPublishedKeyCount" -}}
{{- if .Values.existingSecret }}
{{- int .Values.identity.existingSecretPublishedKeys }}
{{- else }}
{{- len .Values.secrets.identityPublishedKeys }}
{{- end }}
{{- end }}

{{/*
AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES: the mounted published-<n>.pem files, comma-separated; empty when none.
*/}}
{{- define "authgate.identityPublishedKeyFiles" -}}
{{- $dir := include "authgate.identityDir" . }}
{{- $files := list }}
{{- range $i := until (include "authgate.identityPublishedKeyCount" . | int) }}
{{- $files = append $files (printf "%s/published-%d.pem" $dir $i) }}
{{- end }}
{{- join "," $files }}
{{- end }}

{{- define "authgate.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
Pod termination budget: the preStop sleep (delay), then the gateway's own delay after SIGTERM,
then the grace for in-flight requests, then up to 5 s for the security notices still queued
(src/notices/delivery.ts, drainMs), plus 5 s of slack (the audit trail's last write, the store's
close) before the kubelet sends SIGKILL.
*/}}
{{- define "authgate.terminationGracePeriodSeconds" -}}
{{- add (mul 2 (int .Values.config.shutdownDelaySeconds)) (int .Values.config.shutdownGraceSeconds) 10 }}
{{- end }}

{{/*
Checks across values that the schema cannot express. Included by the Deployment.
*/}}
{{- define "authgate.validate" -}}
{{- $redis := .Values.store.redis }}
{{- if eq .Values.store.type "memory" }}
{{- if or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled }}
{{- fail "store.type=memory keeps all state in one process: with more than one replica (or autoscaling) use store.type=redis" }}
{{- end }}
{{- else }}
{{- if gt (len (compact (list $redis.url (join "," $redis.sentinels) (join "," $redis.clusterNodes)))) 1 }}
{{- fail "store.redis: set exactly one of url, sentinels and clusterNodes" }}
{{- end }}
{{- if and $redis.sentinels (not $redis.sentinelName) }}
{{- fail "store.redis.sentinels needs store.redis.sentinelName (the monitored master's name)" }}
{{- end }}
{{- if and (not .Values.existingSecret) (not (or $redis.url $redis.sentinels $redis.clusterNodes)) }}
{{- fail "store.type=redis needs store.redis.url, store.redis.sentinels or store.redis.clusterNodes (or AUTHGATE_REDIS_URL in existingSecret)" }}
{{- end }}
{{- if and (or $redis.sentinelUsername $redis.sentinelPassword) (not $redis.sentinels) }}
{{- fail "store.redis.sentinelUsername and sentinelPassword are the Sentinels' own: they need store.redis.sentinels" }}
{{- end }}
{{- if and $redis.tls.enabled $redis.url (not (hasPrefix "rediss://" $redis.url)) }}
{{- fail "store.redis.tls.enabled with a redis:// url: use rediss://" }}
{{- end }}
{{- if and (or $redis.tls.serverName $redis.tls.ca.secretName $redis.tls.ca.configMapName) (not $redis.tls.enabled) }}
{{- fail "store.redis.tls.serverName and tls.ca need store.redis.tls.enabled" }}
{{- end }}
{{- if and $redis.tls.ca.secretName $redis.tls.ca.configMapName }}
{{- fail "store.redis.tls.ca: set secretName or configMapName, not both" }}
{{- end }}
{{- end }}
{{- if .Values.existingSecret }}
{{- if or .Values.secrets.jwtSecret .Values.secrets.adminToken .Values.secrets.jwtPreviousSecrets $redis.url $redis.password $redis.sentinelPassword }}
{{- fail "existingSecret is set: put AUTHGATE_JWT_SECRET, AUTHGATE_ADMIN_TOKEN, AUTHGATE_JWT_PREVIOUS_SECRETS, AUTHGATE_REDIS_URL, AUTHGATE_REDIS_PASSWORD and AUTHGATE_REDIS_SENTINEL_PASSWORD in that Secret, and leave secrets.* and store.redis.url/password/sentinelPassword empty" }}
{{- end }}
{{- if or .Values.secrets.identityKey .Values.secrets.identityPublishedKeys }}
{{- fail "existingSecret is set: put the identity keys in that Secret (identity-key.pem, and identity-published-0.pem, … counted by identity.existingSecretPublishedKeys), and leave secrets.identityKey and secrets.identityPublishedKeys empty" }}
{{- end }}
{{- else if .Values.identity.existingSecretPublishedKeys }}
{{- fail "identity.existingSecretPublishedKeys counts keys in existingSecret: without it, list the keys in secrets.identityPublishedKeys" }}
{{- end }}
{{- $identity := .Values.identity }}
{{- /* jwksOnPublicPort is on by default: with identity off it is simply not rendered. */}}
{{- if and (not $identity.enabled) (or $identity.audience $identity.ttlSeconds $identity.existingSecretPublishedKeys .Values.secrets.identityKey .Values.secrets.identityPublishedKeys) }}
{{- fail "identity.enabled=false: leave identity.audience, ttlSeconds, existingSecretPublishedKeys and secrets.identityKey / identityPublishedKeys unset" }}
{{- end }}
{{- if and .Values.secrets.jwtSecret (lt (len .Values.secrets.jwtSecret) 32) }}
{{- fail "secrets.jwtSecret must be at least 32 bytes" }}
{{- end }}
{{- if .Values.autoscaling.enabled }}
{{- if gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas) }}
{{- fail "autoscaling.minReplicas must not exceed autoscaling.maxReplicas" }}
{{- end }}
{{- if not (or .Values.autoscaling.targetCPUUtilizationPercentage .Values.autoscaling.targetMemoryUtilizationPercentage) }}
{{- fail "autoscaling needs targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage" }}
{{- end }}
{{- end }}
{{- if eq (int .Values.ports.http) (int .Values.ports.ops) }}
{{- fail "ports.http and ports.ops must differ" }}
{{- end }}
{{- with .Values.authz }}
{{- if .enabled }}
{{- if not .trustedProxies }}
{{- fail "authz.enabled needs authz.trustedProxies: the edge proxies' addresses or CIDRs (the default, loopback, is never a proxy in another pod)" }}
{{- end }}
{{- $ports := list (int $.Values.ports.http) (int $.Values.ports.ops) (int .port) }}
{{- if .grpcPort }}{{ $ports = append $ports (int .grpcPort) }}{{ end }}
{{- if ne (len $ports) (len (uniq $ports)) }}
{{- fail "authz.port and authz.grpcPort must differ from each other and from ports.http and ports.ops" }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{- /*
What the gateway container and the config-check init container share: the settings (ConfigMap and
Secret), the hardening and the mounted files, so the check sees exactly what the start will see.
*/}}
{{- define "authgate.containerEnv" -}}
envFrom:
  - configMapRef:
      name: {{ include "authgate.fullname" . }}
env:
  - name: AUTHGATE_JWT_SECRET
    valueFrom:
      secretKeyRef:
        name: {{ include "authgate.secretName" . }}
        key: AUTHGATE_JWT_SECRET
  - name: AUTHGATE_JWT_PREVIOUS_SECRETS
    valueFrom:
      secretKeyRef:
        name: {{ include "authgate.secretName" . }}
        key: AUTHGATE_JWT_PREVIOUS_SECRETS
        optional: true
  - name: AUTHGATE_ADMIN_TOKEN
    valueFrom:
      secretKeyRef:
        name: {{ include "authgate.secretName" . }}
        key: AUTHGATE_ADMIN_TOKEN
  - name: AUTHGATE_MFA_ENCRYPTION_KEY
    valueFrom:
      secretKeyRef:
        name: {{ include "authgate.secretName" . }}
        key: AUTHGATE_MFA_ENCRYPTION_KEY
        optional: true
  - name: AUTHGATE_MFA_PREVIOUS_ENCRYPTION_KEYS
    valueFrom:
      secretKeyRef:
        name: {{ include "authgate.secretName" . }}
        key: AUTHGATE_MFA_PREVIOUS_ENCRYPTION_KEYS
        optional: true
  - name: AUTHGATE_NOTIFY_WEBHOOK_URL
    valueFrom:
      secretKeyRef:
        name: {{ include "authgate.secretName" . }}
        key: AUTHGATE_NOTIFY_WEBHOOK_URL
        optional: true
  - name: AUTHGATE_NOTIFY_WEBHOOK_SECRET
    valueFrom:
      secretKeyRef:
        name: {{ include "authgate.secretName" . }}
        key: AUTHGATE_NOTIFY_WEBHOOK_SECRET
        optional: true
  {{- if eq .Values.store.type "redis" }}
  - name: AUTHGATE_REDIS_URL
    valueFrom:
      secretKeyRef:
        name: {{ include "authgate.secretName" . }}
        key: AUTHGATE_REDIS_URL
        optional: true
  - name: AUTHGATE_REDIS_PASSWORD
    valueFrom:
      secretKeyRef:
        name: {{ include "authgate.secretName" . }}
        key: AUTHGATE_REDIS_PASSWORD
        optional: true
  - name: AUTHGATE_REDIS_SENTINEL_PASSWORD
    valueFrom:
      secretKeyRef:
        name: {{ include "authgate.secretName" . }}
        key: AUTHGATE_REDIS_SENTINEL_PASSWORD
        optional: true
  {{- end }}
  {{- with .Values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{- define "authgate.containerHardening" -}}
{{- $redisCa := "" }}
{{- if and (eq .Values.store.type "redis") (or .Values.store.redis.tls.ca.secretName .Values.store.redis.tls.ca.configMapName) }}
{{- $redisCa = .Values.store.redis.tls.ca }}
{{- end -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 10001
  runAsGroup: 10001
  readOnlyRootFilesystem: true
  allowPrivilegeEscalation: false
  privileged: false
  capabilities:
    drop: ["ALL"]
  seccompProfile:
    type: RuntimeDefault
volumeMounts:
  - name: tmp
    mountPath: /tmp
  {{- if $redisCa }}
  - name: redis-ca
    mountPath: /etc/authgate/redis-ca
    readOnly: true
  {{- end }}
  {{- if .Values.identity.enabled }}
  - name: identity-keys
    mountPath: {{ include "authgate.identityDir" . }}
    readOnly: true
  {{- end }}
  {{- if include "authgate.routesGiven" . }}
  {{- /* The directory, never a subPath: the kubelet updates a subPath mount never, a directory in place (the gateway watches it). */}}
  - name: routes
    mountPath: {{ include "authgate.routesDir" . }}
    readOnly: true
  {{- end }}
{{- end }}

{{- /* Where the routes file is mounted, and the ConfigMap that holds it. */ -}}
{{- define "authgate.routesDir" -}}
/etc/authgate/routes
{{- end }}

{{- define "authgate.routesCheckName" -}}
{{- printf "%s-routes-check" (include "authgate.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "authgate.routesConfigMapName" -}}
{{- printf "%s-routes" (include "authgate.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- /*
Whether the release has a routes file: "true" or empty. It comes in one of three forms
(routes.file, routes.fileText, routes.existingConfigMap); more than one is refused, since which one
would win is nothing a reader of the values could tell.
*/ -}}
{{- define "authgate.routesGiven" -}}
{{- $forms := list }}
{{- if .Values.routes.file }}{{ $forms = append $forms "routes.file" }}{{ end }}
{{- if .Values.routes.fileText }}{{ $forms = append $forms "routes.fileText" }}{{ end }}
{{- if .Values.routes.existingConfigMap }}{{ $forms = append $forms "routes.existingConfigMap" }}{{ end }}
{{- if gt (len $forms) 1 }}
{{- fail (printf "%s are set together: give the routes file in one form only" (join " and " $forms)) }}
{{- end }}
{{- if $forms }}true{{ end }}
{{- end }}

{{- /* The file's text, for the ConfigMaps the chart writes (routes.file or routes.fileText). */ -}}
{{- define "authgate.routesText" -}}
{{- if .Values.routes.fileText }}{{ .Values.routes.fileText }}{{ else }}{{ toYaml .Values.routes.file }}{{ end }}
{{- end }}

{{- /*
The routes volume: the chart's ConfigMap (named by the argument's "name"), or routes.existingConfigMap
with its key projected as routes.yaml, so AUTHGATE_ROUTES_FILE is the same path either way. A
projected key is updated in place like a whole ConfigMap (only a subPath mount never is).
*/ -}}
{{- define "authgate.routesVolume" -}}
{{- $root := .root -}}
- name: routes
  configMap:
    {{- if $root.Values.routes.existingConfigMap }}
    name: {{ $root.Values.routes.existingConfigMap }}
    items:
      - key: {{ $root.Values.routes.existingConfigMapKey }}
        path: routes.yaml
    {{- else }}
    name: {{ .name }}
    {{- end }}
{{- end }}
