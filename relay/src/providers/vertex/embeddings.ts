/**
 * Vertex AI's text embeddings (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api):
 * `POST …/publishers/google/models/<m>:predict` with `instances: [{ content }]` and `parameters`
 * (`outputDimensionality`), answered with `predictions[].embeddings.values` and each input's
 * `embeddings.statistics.token_count`, which are summed and billed. Models `text-embedding-005`,
 * `text-multilingual-embedding-002`, `gemini-embedding-001`.
 */
import { asNumber, isRecord } from '../../formats/canonical.ts';
import { readGeminiError } from '../../formats/gemini/errors.ts';
import { embeddingsFormat, vectorsOf } from '../embeddings-format.ts';

/** Vertex's embedding models, by name. */
export const isVertexEmbeddingModel = (model: string): boolean => /embedding|gecko/i.test(model);

export const vertexEmbeddingsFormat = embeddingsFormat({
  id: 'vertex-embeddings',
  write(texts, request) {
    const dimensions = asNumber(request.dimensions);
    return {
      instances: texts.map((content) => ({ content })),
      ...(dimensions !== undefined ? { parameters: { outputDimensionality: dimensions } } : {}),
    };
  },
  read(answer) {
    const predictions = Array.isArray(answer.predictions) ? answer.predictions : [];
    let tokens = 0;
    let counted = false;
    const vectors = predictions.map((prediction) => {
      const embeddings = isRecord(prediction) && isRecord(prediction.embeddings) ? prediction.embeddings : {};
      const count = isRecord(embeddings.statistics) ? asNumber(embeddings.statistics.token_count) : undefined;
      if (count !== undefined) {
        tokens += count;
        counted = true;
      }
      return vectorsOf(embeddings.values);
    });
    return { vectors, promptTokens: counted ? Math.floor(tokens) : undefined };
  },
  readError: readGeminiError,
});
