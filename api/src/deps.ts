import type { ChannelProbe } from '@turnpike/core/channels/channel-probe';
import type { RuntimeDeps } from '@turnpike/core/runtime/runtime';

/**
 * Everything the API needs from the outside world, built once by the server (or a test) and passed in: core's
 * runtime, and the channel probe the server brings from the relay (the API never imports the relay itself).
 */
export interface AppDeps extends RuntimeDeps {
  /** Tests a channel as the relay would call it; absent, the channel tests answer that they are unavailable. */
  readonly channelProbe?: ChannelProbe | undefined;
}
