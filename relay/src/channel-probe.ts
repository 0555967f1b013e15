/**
 * The relay's side of the channel test seam (`ChannelProbe`, core/src/channels/channel-probe.ts, docs/adr/0037):
 * the console API's channel test calls this, handed over by the server, so a test sends exactly what the relay
 * would (health/channel-tester.ts) and a failure is judged by the relay's own rule (errors.ts `disableReason`,
 * with the `AutomaticDisableKeywords` the relay matches).
 */
import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import type { ChannelProbe } from '@turnpike/core/channels/channel-probe';
import type { RelayDeps } from './deps.ts';
import { disableReason } from './errors.ts';
import { chooseTestModel, runChannelTest, untestableReason } from './health/channel-tester.ts';
import { createWordMatcher } from './metering/sensitive.ts';
import { providerFor } from './providers/registry.ts';
import { toRelayChannel } from './state/channel-cache.ts';
import { createUpstreamClient } from './upstream/client.ts';

export function createChannelProbe(deps: Pick<RelayDeps, 'config' | 'options'>): ChannelProbe {
  const box = createChannelKeyBox(deps.config.cryptoSecret);
  const upstream = createUpstreamClient({ connectionsPerOrigin: 4 });
  let keywordsText: string | undefined;
  let keywords = createWordMatcher([]);
  const compiledKeywords = () => {
    const text = deps.options.getText('AutomaticDisableKeywords');
    if (text !== keywordsText) {
      keywordsText = text;
      keywords = createWordMatcher(deps.options.get('AutomaticDisableKeywords'));
    }
    return keywords;
  };

  return {
    untestableReason: async (channelType) => untestableReason(channelType),

    async probe(channel, request) {
      const model = chooseTestModel(channel, request.model);
      const tested = toRelayChannel(channel, box);
      const result = await runChannelTest(upstream, tested, model, {
        ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
        ...(request.signal ? { signal: request.signal } : {}),
        settings: deps.options,
      });
      const multiKey = tested.isMultiKey ? tested.key : undefined;
      const { elapsedMs } = result;
      if (result.ok)
        return {
          ok: true,
          model,
          upstreamModel: result.request.upstreamModel,
          elapsedMs,
          usage: result.usage,
          multiKey,
        };
      const reason = disableReason(result.error, {
        automaticDisableEnabled: deps.options.get('AutomaticDisableChannelEnabled'),
        autoBan: channel.autoBan === 1,
        forbiddenMeansRevokedKey: providerFor(channel.type)?.forbiddenMeansRevokedKey === true,
        keywords: compiledKeywords(),
      });
      return {
        ok: false,
        model,
        elapsedMs,
        message: result.error.message,
        isLocal: result.error.isLocal,
        disableReason: reason,
        multiKey,
      };
    },

    close: () => upstream.close(),
  };
}
