/**
 * Cohere (https://docs.cohere.com/reference/about), the key as a bearer token: chat through the v2 chat API in
 * Cohere's own format (chat.ts); embeddings through its OpenAI compatibility API
 * (`/compatibility/v1/embeddings`, https://docs.cohere.com/docs/compatibility-api); rerank at `/v1/rerank`, whose
 * shape the relay's `/v1/rerank` speaks. Which one serves a call is chosen by the model: `embed-…` and `rerank-…`
 * models are Cohere's embedding and rerank models, every other one a chat model.
 */
import { openAiFormat } from '../../formats/openai/format.ts';
import { compatibleProvider } from '../compatible.ts';
import { baseUrlOf, callOf, type Provider } from '../provider.ts';
import { cohereFormat } from './chat.ts';

const cohereEmbedAndRerank = compatibleProvider({
  id: 'cohere',
  genAiName: 'cohere',
  paths: { embeddings: '/compatibility/v1/embeddings', rerank: '/v1/rerank' },
});

const cohereChat: Provider = {
  id: 'cohere',
  format: cohereFormat,
  genAiName: 'cohere',
  supports: (endpoint) => endpoint === 'chat',
  retriesBadRequest: false,
  buildRequest(channel, input) {
    const written = cohereFormat.writeRequest(channel, input);
    return callOf(
      written,
      `${baseUrlOf(channel)}${written.path}`,
      { authorization: `Bearer ${channel.key ?? ''}` },
      channel,
    );
  },
  readError: (status, body) => openAiFormat.readError(status, body),
};

export const cohereProvider: Provider = {
  ...cohereChat,
  supports: (endpoint) => endpoint === 'chat' || cohereEmbedAndRerank.supports(endpoint),
  forModel: (model) => (/^(embed|rerank)/i.test(model) ? cohereEmbedAndRerank : cohereChat),
};
