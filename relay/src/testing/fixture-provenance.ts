/**
 * Where each recorded fixture's upstream side (answer, stream, error) comes from. A fixture copied from a
 * provider's document or an SDK's recorded test data names it in `source` (an https URL); one we wrote ourselves
 * from a reference's field descriptions (its `reference`) is listed here, by its path under `relay/src/`, with the reason no
 * published example backs it. The fixture tests hold every fixture to exactly one of the two.
 */

/** A fixture we wrote from the page its `reference` names, of which no published example or recording was found. */
const ours = (what: string) =>
  `written by us from the page its reference names: no published example or SDK recording of ${what} was found`;

/** Fixtures written by us, and why. Keys are paths under `relay/src/`. */
export const FIXTURES_WRITTEN_BY_US: Readonly<Record<string, string>> = {
  'formats/anthropic/__fixtures__/cache.json': ours('a cache_control request with its cache usage'),
  'formats/anthropic/__fixtures__/error.json': ours('an overloaded_error answer and error event together'),
  'formats/anthropic/__fixtures__/images.json': ours('this base64 and URL image request'),
  'formats/anthropic/__fixtures__/stream.json': ours(
    'this stream (the documented tool-use stream is read in formats/documented-streams.test.ts)',
  ),
  'formats/anthropic/__fixtures__/text.json': ours('this system-prompt conversation and its answer'),
  'formats/anthropic/__fixtures__/thinking.json': ours('this extended-thinking answer with its signature'),
  'formats/anthropic/__fixtures__/tools.json': ours('this tool round trip (call, result, next call)'),
  'formats/gemini/__fixtures__/cache.json': ours('a cachedContent request with cachedContentTokenCount'),
  'formats/gemini/__fixtures__/error.json': ours('a RESOURCE_EXHAUSTED answer and error event together'),
  'formats/gemini/__fixtures__/images.json': ours('this inlineData and fileData request'),
  'formats/gemini/__fixtures__/stream.json': ours(
    'this stream (recorded alt=sse streams are read in formats/documented-streams.test.ts)',
  ),
  'formats/gemini/__fixtures__/text.json': ours('this systemInstruction conversation and its answer'),
  'formats/gemini/__fixtures__/thinking.json': ours('this thinkingConfig answer with thought parts'),
  'formats/gemini/__fixtures__/tools.json': ours('this functionCall round trip'),
  'providers/azure/__fixtures__/content-filter.json': ours(
    'a whole 400 body with innererror.content_filter_result on Microsoft pages (the page describes the fields)',
  ),
  'providers/bedrock/__fixtures__/converse-stream.json': ours(
    'a ConverseStream event sequence (the reference lists the events and their fields, no stream)',
  ),
  'providers/bedrock/__fixtures__/converse-tools.json': ours('this Converse tool round trip'),
  'providers/bedrock/__fixtures__/invoke-stream.json': ours(
    'an InvokeModelWithResponseStream chunk sequence with amazon-bedrock-invocationMetrics',
  ),
  'providers/vertex/__fixtures__/gemini-chat.json': ours(
    'a Vertex generateContent answer and alt=sse stream with trafficType and createTime',
  ),
};

/**
 * Why a fixture does not say where its upstream side came from, or undefined when it does: a `source` that is an
 * https URL, or a place on the list above, never both.
 */
export function provenanceProblem(
  pathUnderSrc: string,
  fixture: Readonly<Record<string, unknown>>,
): string | undefined {
  const { source } = fixture;
  const ours = FIXTURES_WRITTEN_BY_US[pathUnderSrc];
  if ('checkedAgainstRealCapture' in fixture)
    return 'checkedAgainstRealCapture is gone: name a source instead';
  if (source !== undefined && ours !== undefined) return 'names a source and is listed as written by us';
  if (source !== undefined)
    return typeof source === 'string' && /^https:\/\/\S+$/.test(source)
      ? undefined
      : 'source is not an https URL';
  return ours === undefined ? 'names no source and is not on the list of fixtures written by us' : undefined;
}
