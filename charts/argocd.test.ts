/**
 * The Argo CD examples of deploy/argocd: each custom resource's health script, run in a Lua interpreter against
 * the states an operator produces, and the ApplicationSet's sync waves.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runHealthScript } from './testing/lua.ts';

const ARGOCD = join(import.meta.dirname, '..', 'deploy', 'argocd');
const config = parse(readFileSync(join(ARGOCD, 'argocd-cm-health.yaml'), 'utf8')) as {
  data: Record<string, string>;
};
const KINDS = ['Channel', 'ModelPrice', 'GatewayOption'];

const resource = (generation: number, status?: Record<string, unknown>) => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'Channel',
  metadata: { name: 'openai', generation },
  ...(status ? { status } : {}),
});
const ready = (value: string, reason: string, message: string) => ({
  type: 'Ready',
  status: value,
  reason,
  message,
  lastTransitionTime: '2026-11-24T20:00:00Z',
});

describe.each(KINDS)('Argo CD health of %s', (kind) => {
  const script = config.data[`resource.customizations.health.turnpike.dev_${kind}`] as string;

  it('is defined', () => {
    expect(script).toBeTruthy();
  });

  it('is Progressing before the operator has written a status', () => {
    expect(runHealthScript(script, resource(1)).status).toBe('Progressing');
  });

  it('is Progressing while the status describes an older generation', () => {
    const health = runHealthScript(
      script,
      resource(3, { observedGeneration: 2, conditions: [ready('True', 'Synced', '')] }),
    );
    expect(health).toEqual({
      status: 'Progressing',
      message: 'The operator has not seen the latest change yet',
    });
  });

  it('is Healthy when Ready is True for the current generation', () => {
    const health = runHealthScript(
      script,
      resource(3, {
        observedGeneration: 3,
        conditions: [ready('True', 'Synced', 'written to the database')],
      }),
    );
    expect(health).toEqual({ status: 'Healthy', message: 'written to the database' });
  });

  it('is Degraded with the condition message when Ready is False', () => {
    const health = runHealthScript(
      script,
      resource(2, {
        observedGeneration: 2,
        conditions: [
          {
            type: 'SecretResolved',
            status: 'False',
            reason: 'SecretNotFound',
            message: 'no Secret openai-key',
          },
          ready('False', 'SecretNotFound', 'no Secret openai-key'),
        ],
      }),
    );
    expect(health).toEqual({ status: 'Degraded', message: 'no Secret openai-key' });
  });

  it('stays Progressing while Ready is Unknown', () => {
    const health = runHealthScript(
      script,
      resource(1, { observedGeneration: 1, conditions: [ready('Unknown', 'Reconciling', 'syncing')] }),
    );
    expect(health.status).toBe('Progressing');
  });
});

describe('Argo CD ApplicationSet', () => {
  const set = parse(readFileSync(join(ARGOCD, 'applicationset.yaml'), 'utf8'));
  const elements = set.spec.generators[0].matrix.generators[1].list.elements as {
    component: string;
    wave: string;
    path: string;
  }[];

  it('syncs the CRDs before the gateway, and the custom resources after it', () => {
    const waves = Object.fromEntries(elements.map((e) => [e.component, Number(e.wave)]));
    expect(waves.crds).toBeLessThan(waves.gateway as number);
    expect(waves.gateway).toBeLessThan(waves.resources as number);
    expect(set.spec.template.metadata.annotations['argocd.argoproj.io/sync-wave']).toBe('{{ .wave }}');
    expect(elements.find((e) => e.component === 'crds')?.path).toBe('charts/turnpike-crds');
    expect(set.spec.template.spec.syncPolicy.syncOptions).toContain('SkipDryRunOnMissingResource=true');
  });

  it('gives the gateway existing secrets, as helm template cannot keep generated ones', () => {
    expect(set.spec.templatePatch).toContain('existingSecret: turnpike-secrets');
  });
});
