import type { ChannelProbe } from '@turnpike/core/channels/channel-probe';
import type { RuntimeDeps } from '@turnpike/core/runtime/runtime';

/**
 * The relay's channel probe for the console API, loaded when a channel is first tested: an API pod (ROLE=api)
 * tests channels as the relay calls them without carrying the relay's modules from its start (bench/README.md
 * "Memory"). ROLE=all loads the same module, already there beside the relay.
 */
export function lazyChannelProbe(deps: Pick<RuntimeDeps, 'config' | 'options'>): ChannelProbe {
  let loaded: Promise<ChannelProbe> | undefined;
  const load = () => {
    loaded ??= import('@turnpike/relay/channel-probe').then((m) => m.createChannelProbe(deps));
    return loaded;
  };
  return {
    untestableReason: async (channelType) => (await load()).untestableReason(channelType),
    probe: async (channel, request) => (await load()).probe(channel, request),
    // Nothing to close when no channel was ever tested.
    close: async () => (loaded ? (await loaded).close() : undefined),
  };
}
