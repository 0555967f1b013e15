/**
 * Baidu Qianfan V2 (https://cloud.baidu.com/doc/qianfan-api/s/3m7of64lb): OpenAI's format under `/v2` (chat
 * completions, embeddings), the Qianfan API key (`bce-v3/…`) as a bearer token.
 */
import { compatibleProvider } from '../compatible.ts';

export const qianfanProvider = compatibleProvider({
  id: 'qianfan',
  genAiName: 'baidu.qianfan',
  paths: { chat: '/v2/chat/completions', embeddings: '/v2/embeddings' },
});
