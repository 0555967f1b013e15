/**
 * MiniMax (https://platform.minimaxi.com/document/ChatCompletion%20v2): chat completions in OpenAI's format at
 * `/v1/text/chatcompletion_v2`, the API key as a bearer token.
 */
import { compatibleProvider } from '../compatible.ts';

export const minimaxProvider = compatibleProvider({
  id: 'minimax',
  genAiName: 'minimax',
  paths: { chat: '/v1/text/chatcompletion_v2' },
});
