/**
 * Volcengine Ark / Doubao (https://www.volcengine.com/docs/82379/1298454): OpenAI's format under `/api/v3`
 * (chat completions, embeddings, image generation), the Ark API key as a bearer token; the model is the model id
 * or the endpoint id (`ep-…`).
 */
import { compatibleProvider } from '../compatible.ts';

export const arkProvider = compatibleProvider({
  id: 'ark',
  genAiName: 'volcengine.ark',
  paths: {
    chat: '/api/v3/chat/completions',
    embeddings: '/api/v3/embeddings',
    'image-generation': '/api/v3/images/generations',
  },
});
