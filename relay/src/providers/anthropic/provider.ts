/**
 * Anthropic's API (https://docs.anthropic.com/en/api/getting-started): `<base>/v1/messages`, the key in
 * `x-api-key`; the version and beta headers are the format's.
 */
import { anthropicFormat } from '../../formats/anthropic/format.ts';
import { baseUrlOf, plainProvider } from '../provider.ts';

export const anthropicProvider = plainProvider({
  id: 'anthropic',
  format: anthropicFormat,
  genAiName: 'anthropic',
  url: (channel, written) => `${baseUrlOf(channel, 'https://api.anthropic.com')}${written.path}`,
  credential: (channel) => ({ 'x-api-key': channel.key ?? '' }),
});
