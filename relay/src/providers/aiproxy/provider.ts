/**
 * AI Proxy (https://docs.aiproxy.io): its OpenAI-compatible API, `<base>/v1/chat/completions` and
 * `/v1/embeddings`, the API key as a bearer token. Its knowledge-base `ask` API is not carried (docs/adr/0024).
 */
import { compatibleProvider } from '../compatible.ts';

export const aiProxyProvider = compatibleProvider({
  id: 'aiproxy',
  genAiName: 'aiproxy',
  paths: { chat: '/v1/chat/completions', embeddings: '/v1/embeddings' },
});
