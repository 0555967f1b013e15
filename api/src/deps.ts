import type { ChannelProbe } from '@turnpike/core/channels/channel-probe';
import type { ResolveHost } from '@turnpike/core/net/guarded-fetch';
import type { RuntimeDeps } from '@turnpike/core/runtime/runtime';
import type { PlanServiceOptions } from './modules/plans/plans.service.ts';

/**
 * Everything the API needs from the outside world, built once by the server (or a test) and passed in: core's
 * runtime, and the channel probe the server brings from the relay (the API never imports the relay itself).
 */
export interface AppDeps extends RuntimeDeps {
  /** Tests a channel as the relay would call it; absent, the channel tests answer that they are unavailable. */
  readonly channelProbe?: ChannelProbe | undefined;
  /** How the addresses administrators save are resolved to be checked (docs/adr/0039); tests answer their own. */
  readonly resolveHost?: ResolveHost | undefined;
  /** The clock as Unix seconds (what a quota window has spent is read at this moment); tests fix it. */
  readonly now?: (() => number) | undefined;
  /** Where Stripe's and Creem's APIs are (their own by default); tests point them at local stand-ins. */
  readonly paymentEndpoints?: PlanServiceOptions | undefined;
}
