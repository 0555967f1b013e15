/**
 * Cloudflare Workers AI, its OpenAI-compatible endpoints
 * (https://developers.cloudflare.com/workers-ai/configuration/open-ai-compatibility/):
 * `/client/v4/accounts/<account id>/ai/v1/chat/completions` and `/embeddings`, the account id from the channel's
 * `other`, the API token as a bearer token.
 */
import { compatibleProvider } from '../compatible.ts';

export const cloudflareProvider = compatibleProvider({
  id: 'cloudflare',
  genAiName: 'cloudflare.workers_ai',
  paths: {
    chat: '/client/v4/accounts/{other}/ai/v1/chat/completions',
    embeddings: '/client/v4/accounts/{other}/ai/v1/embeddings',
  },
  needsOther: 'the Cloudflare channel names no account id (other)',
});
