import type { Notifier } from '@turnpike/core/notify/notifier';
import type { PriceBook } from '@turnpike/core/options/price-tables';
import type { FastifyBaseLogger } from 'fastify';
import type { SettlementContext } from '../books/settlement-context.ts';
import type { Limiter } from '../limits/limiter.ts';
import type { WordMatcher } from '../metering/sensitive.ts';
import type { ResponseStore } from '../responses-store/store.ts';
import type { AuthCache } from '../state/auth-cache.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { ContentLogs } from './content-capture.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { SensitiveWords } from './sensitive-words.ts';

/** Everything a relay request handler uses, built once per relay app. */
export interface RelayContext extends SettlementContext {
  readonly auth: AuthCache;
  readonly upstream: UpstreamClient;
  /** Request prices, resolved once per model, group and user flags until an option changes. */
  readonly prices: PriceBook;
  /** Low-balance notices to users, channel notices to root; sent in the background. */
  readonly notifier: Notifier;
  /** The per-user request rate limit (`ModelRequestRateLimit*`), asked once per request after auth. */
  readonly rateLimit: RateLimiter;
  /** Requests and tokens per minute and concurrency per user, group, token, model and channel (docs/adr/0028). */
  readonly limits: Limiter;
  /** Whether a call keeps its prompt and answer (docs/adr/0045): a capture when it does, nothing when not. */
  readonly contentLogs: ContentLogs;
  /** Stored Responses (docs/adr/0051): kept off the request path, read back for a chain a call continues. */
  readonly responses: ResponseStore;
  /** `AutomaticDisableKeywords`, compiled once per change of the option. */
  keywords(): WordMatcher;
  /** `SensitiveWords`, compiled once per change of the option. */
  sensitiveWords(): SensitiveWords;
  /** The clock quota windows are counted by, in Unix seconds (docs/adr/0043); tests move it. */
  windowClock(): number;
  readonly log: FastifyBaseLogger;
}

/** The response header carrying the quota charged for a request (for a stream: an SSE comment, see text.ts). */
export const QUOTA_HEADER = 'x-turnpike-quota';
