/**
 * Gemini's grounding and service tier, in the shapes of https://ai.google.dev/gemini-api/docs/google-search
 * (`groundingMetadata` with `webSearchQueries` and `groundingChunks`), Vertex AI's `usageMetadata.trafficType`
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/GenerateContentResponse) and the Gemini
 * API's `x-gemini-service-tier` header (https://ai.google.dev/gemini-api/docs/priority-inference).
 */
import { describe, expect, it } from 'vitest';
import { geminiServiceTierOf, geminiUsageOf } from './usage.ts';

const usageMetadata = { promptTokenCount: 120, candidatesTokenCount: 40, totalTokenCount: 160 };
const grounded = (model: string, queries: string[]) => ({
  modelVersion: model,
  candidates: [
    {
      content: { role: 'model', parts: [{ text: 'Spain won Euro 2024.' }] },
      groundingMetadata: {
        webSearchQueries: queries,
        groundingChunks: [{ web: { uri: 'https://example.com', title: 'example.com' } }],
      },
    },
  ],
  usageMetadata,
});

describe('geminiUsageOf', () => {
  it('counts one search per grounded answer of a 2.x model, however many queries it ran', () => {
    expect(geminiUsageOf(grounded('gemini-2.5-pro', ['who won euro 2024', 'euro 2024 final']))).toMatchObject(
      {
        promptTokens: 120,
        webSearchCalls: 1,
      },
    );
  });

  it('counts every search query of a Gemini 3 answer', () => {
    expect(geminiUsageOf(grounded('gemini-3-pro-preview', ['a', 'b', 'c']))).toMatchObject({
      webSearchCalls: 3,
    });
    // The model asked for, when the answer does not name its version.
    const { modelVersion: _named, ...unnamed } = grounded('', ['a', 'b']);
    expect(geminiUsageOf(unnamed, 'gemini-3-pro-preview')).toMatchObject({ webSearchCalls: 2 });
  });

  it('counts no search for an answer that was not grounded', () => {
    expect(
      geminiUsageOf({ modelVersion: 'gemini-2.5-pro', candidates: [], usageMetadata }),
    ).not.toHaveProperty('webSearchCalls');
  });

  it('counts the images of an answer', () => {
    const answer = {
      candidates: [
        {
          content: {
            parts: [
              { text: 'Here you go' },
              { inlineData: { mimeType: 'image/png', data: 'iVBOR' } },
              { inlineData: { mimeType: 'image/png', data: 'iVBOR' } },
            ],
          },
        },
      ],
      usageMetadata,
    };
    expect(geminiUsageOf(answer)).toMatchObject({ imageCount: 2 });
  });

  it("reads Vertex AI's traffic type as the service tier", () => {
    expect(
      geminiUsageOf({ usageMetadata: { ...usageMetadata, trafficType: 'ON_DEMAND_PRIORITY' } }),
    ).toMatchObject({ serviceTier: 'priority' });
    expect(
      geminiUsageOf({ usageMetadata: { ...usageMetadata, trafficType: 'ON_DEMAND_FLEX' } }),
    ).toMatchObject({
      serviceTier: 'flex',
    });
    expect(geminiUsageOf({ usageMetadata })).not.toHaveProperty('serviceTier');
  });

  it('reads the service tier of the Gemini API from its response header', () => {
    expect(geminiServiceTierOf({ 'x-gemini-service-tier': 'priority' })).toBe('priority');
    expect(geminiServiceTierOf({})).toBeUndefined();
  });
});
