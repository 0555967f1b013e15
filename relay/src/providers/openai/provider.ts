/**
 * OpenAI and every OpenAI-compatible host (https://platform.openai.com/docs/api-reference/authentication):
 * `<base>/v1/<endpoint>` (the type's default base when the channel names none), `Authorization: Bearer <key>`,
 * `OpenAI-Organization` when the channel has one.
 */
import { openAiFormat } from '../../formats/openai/format.ts';
import { baseUrlOf, plainProvider } from '../provider.ts';

export const openAiProvider = plainProvider({
  id: 'openai',
  format: openAiFormat,
  genAiName: 'openai',
  url: (channel, written) => `${baseUrlOf(channel, 'https://api.openai.com')}${written.path}`,
  credential(channel) {
    const headers: Record<string, string> = { authorization: `Bearer ${channel.key ?? ''}` };
    if (channel.organization) headers['openai-organization'] = channel.organization;
    return headers;
  },
});
