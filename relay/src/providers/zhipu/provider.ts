/**
 * Zhipu GLM-4, the v4 API (https://docs.bigmodel.cn/api-reference): OpenAI's format under `/api/paas/v4`
 * (chat completions, embeddings, image generation), the API key as a bearer token.
 */
import { compatibleProvider } from '../compatible.ts';

export const zhipuProvider = compatibleProvider({
  id: 'zhipu',
  genAiName: 'zhipu',
  paths: {
    chat: '/api/paas/v4/chat/completions',
    embeddings: '/api/paas/v4/embeddings',
    'image-generation': '/api/paas/v4/images/generations',
  },
});
