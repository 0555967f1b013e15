/**
 * Tencent Hunyuan, its OpenAI-compatible endpoint (https://cloud.tencent.com/document/product/1729/111007):
 * `https://api.hunyuan.cloud.tencent.com/v1/chat/completions` and `/v1/embeddings`, a Hunyuan API key as a bearer
 * token (the native API's TC3 signature with SecretId/SecretKey is not used).
 */
import { compatibleProvider } from '../compatible.ts';

export const hunyuanProvider = compatibleProvider({
  id: 'hunyuan',
  genAiName: 'tencent.hunyuan',
  paths: { chat: '/v1/chat/completions', embeddings: '/v1/embeddings' },
});
