#!/usr/bin/env bash
# make e2e-kind: the operator end to end on a real Kubernetes, for machines with Docker.
# Creates a kind cluster, builds and loads the image, installs the CRD chart and the turnpike chart (bundled
# PostgreSQL and Redis), starts a fake OpenAI upstream in the cluster, applies a Secret + Channel + ModelPrice,
# waits for Ready=True, then makes a relay call through the channel and deletes it again.
# It cannot run on machines without Docker (such as the one this project is developed on); it says so and stops.
set -euo pipefail

CLUSTER="${E2E_CLUSTER:-turnpike-e2e}"
NAMESPACE="${E2E_NAMESPACE:-turnpike}"
IMAGE="${E2E_IMAGE:-turnpike/turnpike:e2e}"
KEEP="${E2E_KEEP:-false}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

missing=()
for tool in docker kind kubectl helm curl; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ] || ! docker info >/dev/null 2>&1; then
  echo "make e2e-kind cannot run here: it needs a running Docker daemon and kind, kubectl, helm and curl on PATH" >&2
  [ "${#missing[@]}" -gt 0 ] && echo "missing: ${missing[*]}" >&2
  echo "The same flows run without a cluster in: npx vitest run --project operator:integration" >&2
  exit 2
fi

step() { printf '\n==> %s\n' "$*"; }
cleanup() {
  if [ "$KEEP" != "true" ]; then
    step "deleting kind cluster $CLUSTER (E2E_KEEP=true keeps it)"
    kind delete cluster --name "$CLUSTER" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

step "kind cluster $CLUSTER"
kind get clusters | grep -qx "$CLUSTER" || kind create cluster --name "$CLUSTER" --wait 120s

step "image $IMAGE"
docker build -t "$IMAGE" "$ROOT"
kind load docker-image "$IMAGE" --name "$CLUSTER"

step "charts: CRDs, then Turnpike with the operator watching namespace $NAMESPACE"
helm upgrade --install turnpike-crds "$ROOT/charts/turnpike-crds" --wait
helm upgrade --install turnpike "$ROOT/charts/turnpike" --namespace "$NAMESPACE" --create-namespace \
  --set image.repository="${IMAGE%:*}" --set image.tag="${IMAGE##*:}" --set image.pullPolicy=Never \
  --set operator.replicas=2 --wait --timeout 10m

step "fake OpenAI upstream in the cluster (the same image)"
kubectl -n "$NAMESPACE" apply -f - <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: fake-openai}
spec:
  selector: {matchLabels: {app: fake-openai}}
  template:
    metadata: {labels: {app: fake-openai}}
    spec:
      containers:
        - name: fake
          image: $IMAGE
          imagePullPolicy: Never
          command: [node, relay/src/testing/fake-openai-main.ts, --port, "8080"]
          ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: fake-openai}
spec:
  selector: {app: fake-openai}
  ports: [{port: 80, targetPort: 8080}]
YAML
kubectl -n "$NAMESPACE" rollout status deploy/fake-openai --timeout 120s

step "Secret, Channel and ModelPrice"
kubectl -n "$NAMESPACE" apply -f - <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: e2e-upstream
  labels: {turnpike.dev/credential: "true"}
stringData: {apiKey: sk-e2e}
---
apiVersion: turnpike.dev/v1alpha1
kind: Channel
metadata: {name: e2e}
spec:
  type: openai
  baseURL: http://fake-openai.$NAMESPACE.svc
  keySecretRef: {name: e2e-upstream}
  models: [gpt-4o-mini]
---
apiVersion: turnpike.dev/v1alpha1
kind: ModelPrice
metadata: {name: e2e}
spec:
  models: [gpt-4o-mini]
  price: {input: "0.15", output: "0.6"}
YAML
kubectl -n "$NAMESPACE" wait --for=condition=Ready channel/e2e modelprice/e2e --timeout 120s
kubectl -n "$NAMESPACE" get channels,modelprices

step "a relay call through the channel"
kubectl -n "$NAMESPACE" port-forward svc/turnpike-api 18080:80 >/dev/null 2>&1 &
API_PF=$!
kubectl -n "$NAMESPACE" port-forward svc/turnpike-relay 18081:80 >/dev/null 2>&1 &
RELAY_PF=$!
trap 'kill $API_PF $RELAY_PF 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 1 30); do curl -fsS http://127.0.0.1:18080/api/status >/dev/null 2>&1 && break; sleep 1; done
JAR="$(mktemp)"
curl -fsS -X POST http://127.0.0.1:18080/api/setup -H 'content-type: application/json' \
  -d '{"username":"root","password":"e2e-root-password","confirmPassword":"e2e-root-password"}' >/dev/null
USER_ID="$(curl -fsS -c "$JAR" -X POST http://127.0.0.1:18080/api/user/login -H 'content-type: application/json' \
  -d '{"username":"root","password":"e2e-root-password"}' | sed -E 's/.*"id":([0-9]+).*/\1/')"
curl -fsS -b "$JAR" -H "new-api-user: $USER_ID" -X POST http://127.0.0.1:18080/api/token/ -H 'content-type: application/json' \
  -d '{"name":"e2e","unlimited_quota":true,"remain_quota":0,"expired_time":-1}' >/dev/null
KEY="$(curl -fsS -b "$JAR" -H "new-api-user: $USER_ID" 'http://127.0.0.1:18080/api/token/?p=1&size=10' \
  | sed -E 's/.*"key":"([^"]+)".*/\1/')"
ANSWER="$(curl -fsS http://127.0.0.1:18081/v1/chat/completions -H "authorization: Bearer $KEY" \
  -H 'content-type: application/json' -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}')"
echo "$ANSWER" | grep -q '"choices"' || { echo "relay call failed: $ANSWER" >&2; exit 1; }
echo "relay answered through Channel e2e"

step "delete the Channel: its rows go, the model stops routing"
kubectl -n "$NAMESPACE" delete channel/e2e --wait --timeout 60s
for _ in $(seq 1 20); do
  CODE="$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18081/v1/chat/completions \
    -H "authorization: Bearer $KEY" -H 'content-type: application/json' \
    -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}')"
  [ "$CODE" != "200" ] && { echo "model unroutable after delete ($CODE)"; exit 0; }
  sleep 0.5
done
echo "the model still routes 10 s after the Channel was deleted" >&2
exit 1
