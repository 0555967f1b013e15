/**
 * M3E embeddings (Moka AI, https://github.com/wangyuxinwhy/uniem, served behind an OpenAI-style API):
 * `/v1/embeddings` in OpenAI's shape, the key as a bearer token.
 */
import { compatibleProvider } from '../compatible.ts';

export const m3eProvider = compatibleProvider({
  id: 'm3e',
  genAiName: 'moka.m3e',
  paths: { embeddings: '/v1/embeddings' },
});
