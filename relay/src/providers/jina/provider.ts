/**
 * Jina AI (https://jina.ai/embeddings, https://jina.ai/reranker): `/v1/embeddings` in OpenAI's shape and
 * `/v1/rerank` (the rerank shape the relay's `/v1/rerank` speaks), the API key as a bearer token.
 */
import { compatibleProvider } from '../compatible.ts';

export const jinaProvider = compatibleProvider({
  id: 'jina',
  genAiName: 'jina',
  paths: { embeddings: '/v1/embeddings', rerank: '/v1/rerank' },
});
