/**
 * Alibaba Qwen on DashScope, compatible mode (https://help.aliyun.com/zh/model-studio/compatibility-of-openai-with-dashscope):
 * OpenAI's format under `/compatible-mode/v1` (chat completions, embeddings), the API key as a bearer token.
 */
import { compatibleProvider } from '../compatible.ts';

export const dashscopeProvider = compatibleProvider({
  id: 'dashscope',
  genAiName: 'alibaba.dashscope',
  paths: { chat: '/compatible-mode/v1/chat/completions', embeddings: '/compatible-mode/v1/embeddings' },
});
