/**
 * Embeddings on Bedrock through InvokeModel (`POST /model/<id>/invoke`), each model family in its own body:
 * - Amazon Titan Text Embeddings (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html):
 *   `{ inputText, dimensions? }` → `{ embedding, inputTextTokenCount }`, one text a call (a list of several is the
 *   caller's 400, since Titan has no batch in InvokeModel).
 * - Cohere Embed (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html):
 *   `{ texts, input_type }` → `{ embeddings: [[…]] }`; it reports no tokens in the body, so they are counted.
 */
import { asNumber, isRecord } from '../../formats/canonical.ts';
import { embeddingsFormat, refuseRequest, vectorsOf } from '../embeddings-format.ts';
import { readBedrockError } from './errors.ts';

/** Bedrock's embedding models, by id (a cross-region profile prefix allowed). */
export const isBedrockEmbeddingModel = (model: string): boolean =>
  /(^|\.)(amazon\.titan-embed|cohere\.embed)/i.test(model);

const isTitan = (model: string): boolean => /amazon\.titan-embed/i.test(model);

export const bedrockEmbeddingsFormat = embeddingsFormat({
  id: 'bedrock-embeddings',
  write(texts, request, model) {
    if (!isTitan(model)) return { texts, input_type: 'search_document' };
    if (texts.length !== 1)
      throw refuseRequest(`${model} embeds one text a request on Bedrock: send input as one string`);
    const dimensions = asNumber(request.dimensions);
    return { inputText: texts[0], ...(dimensions !== undefined ? { dimensions } : {}) };
  },
  read(answer) {
    if (Array.isArray(answer.embedding))
      return { vectors: [vectorsOf(answer.embedding)], promptTokens: asNumber(answer.inputTextTokenCount) };
    const list = Array.isArray(answer.embeddings)
      ? answer.embeddings
      : isRecord(answer.embeddings) && Array.isArray(answer.embeddings.float)
        ? answer.embeddings.float
        : [];
    return { vectors: list.map(vectorsOf), promptTokens: undefined };
  },
  readError: (status, body) => readBedrockError(status, body, {}),
});
