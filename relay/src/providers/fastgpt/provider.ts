/**
 * FastGPT (https://doc.fastgpt.io/docs/development/openapi/chat): an app's chat at `<base>/v1/chat/completions`
 * in OpenAI's format (the base is the deployment's `…/api`, or the legacy `…/api/openapi`), the app's API key as a
 * bearer token.
 */
import { compatibleProvider } from '../compatible.ts';

export const fastGptProvider = compatibleProvider({
  id: 'fastgpt',
  genAiName: 'fastgpt',
  paths: { chat: '/v1/chat/completions' },
});
