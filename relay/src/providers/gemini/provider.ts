/**
 * The Gemini API (https://ai.google.dev/api#request-structure): `<base>/<version>/<path>`, the version per model
 * from `gemini.version_settings` (default `v1beta`), the key in `x-goog-api-key`.
 */
import { geminiFormat } from '../../formats/gemini/format.ts';
import { baseUrlOf, plainProvider } from '../provider.ts';

export const geminiProvider = {
  ...plainProvider({
    id: 'gemini',
    format: geminiFormat,
    genAiName: 'gcp.gemini',
    url(channel, written, input) {
      const versions = input.options.get('gemini.version_settings');
      const version = versions[written.model] ?? versions.default ?? 'v1beta';
      return `${baseUrlOf(channel, 'https://generativelanguage.googleapis.com')}/${version}/${written.path}`;
    },
    credential: (channel) => ({ 'x-goog-api-key': channel.key ?? '' }),
  }),
  // A revoked key answers 403 (reference §4.7).
  forbiddenMeansRevokedKey: true,
};
