import type { GatewayEvent } from '@turnpike/core/events/bus';
import { describe, expect, it } from 'vitest';
import type { RelayError } from '../contract.ts';
import { localError, parseUpstreamError } from '../errors.ts';
import { createCooldownTracker } from '../health/cooldown.ts';
import { createWordMatcher } from '../metering/sensitive.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import { checkChannelHealth } from './channel-health.ts';
import type { RelayContext } from './context.ts';

const channel: RelayChannel = {
  id: 9,
  other: '',
  name: 'flaky',
  type: 1,
  key: 'sk-x',
  baseUrl: 'http://upstream.test',
  status: 1,
  autoBan: true,
  modelMapping: {},
  statusCodeMapping: undefined,
  paramOverride: undefined,
  headers: {},
  organization: undefined,
};

/** A context with only what checkChannelHealth reads: options, the channel cache's cool-downs, a logger. */
function contextWith(options: Record<string, unknown>) {
  const cooldown = createCooldownTracker();
  const warnings: string[] = [];
  const published: GatewayEvent[] = [];
  const values: Record<string, unknown> = {
    AutomaticDisableChannelEnabled: false,
    ChannelCooldownEnabled: true,
    ChannelCooldownFailures: 2,
    ChannelCooldownWindowSeconds: 60,
    ChannelCooldownMinutes: 5,
    ...options,
  };
  const ctx = {
    deps: {
      options: { get: (key: string) => values[key] },
      bus: { publish: async (event: GatewayEvent) => published.push(event) },
    },
    channels: { cooldown, markDisabled: () => {} },
    keywords: () => createWordMatcher([]),
    log: { warn: (_obj: unknown, message: string) => warnings.push(message), error: () => {} },
  } as unknown as RelayContext;
  return { ctx, cooldown, warnings, published };
}

const transport = (status: 502 | 504): RelayError => ({
  status,
  message: status === 504 ? 'upstream response timeout' : 'upstream connection failed',
  type: 'upstream_error',
  code: 'do_request_failed',
  param: null,
  isLocal: false,
});

describe('checkChannelHealth and cool-downs', () => {
  it.each([
    ['a 500', parseUpstreamError(500, '{"error":{"message":"boom","type":"server_error"}}')],
    ['a 429', parseUpstreamError(429, '{"error":{"message":"slow down","code":"rate_limit_exceeded"}}')],
    ['a timeout', transport(504)],
    ['a connection failure', transport(502)],
  ])('rests the channel after two failures like %s', (_name, error) => {
    const { ctx, cooldown, warnings, published } = contextWith({});
    checkChannelHealth(ctx, channel, error);
    expect(cooldown.isCoolingDown(channel.id)).toBe(false);
    checkChannelHealth(ctx, channel, error);
    expect(cooldown.isCoolingDown(channel.id)).toBe(true);
    expect(warnings).toContain('channel cooling down after repeated failures');
    // Every other process is told to rest it until the same time.
    expect(published).toEqual([
      { type: 'channels.cooldown', id: channel.id, until: cooldown.coolingUntil(channel.id) },
    ]);
  });

  it('does not count local errors, nor 4xx answers about the request or the key', () => {
    const { ctx, cooldown } = contextWith({});
    const errors = [
      localError(503, 'model_not_found', 'no channel'),
      localError(500, 'model_price_error', 'no price'),
      parseUpstreamError(400, '{"error":{"message":"context too long","type":"invalid_request_error"}}'),
      parseUpstreamError(401, '{"error":{"message":"bad key","code":"invalid_api_key"}}'),
    ];
    for (let i = 0; i < 5; i += 1) for (const error of errors) checkChannelHealth(ctx, channel, error);
    expect(cooldown.isCoolingDown(channel.id)).toBe(false);
  });

  it('counts nothing while ChannelCooldownEnabled is off', () => {
    const { ctx, cooldown } = contextWith({ ChannelCooldownEnabled: false });
    for (let i = 0; i < 5; i += 1) checkChannelHealth(ctx, channel, parseUpstreamError(500, ''));
    expect(cooldown.isCoolingDown(channel.id)).toBe(false);
  });
});
