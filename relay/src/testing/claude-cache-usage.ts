/**
 * Anthropic `usage` objects with cache writes, shaped as
 * https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching ("Tracking cache performance") documents them:
 * `input_tokens` excludes the cache, `cache_creation_input_tokens` is every write and `cache_creation` splits it by
 * how long the cache keeps it. The figures are issue 39's request: 1,000 input, 1,000 tokens written to a 1-hour
 * cache, 1,000 to a 5-minute cache, 3,000 read from the cache, 500 output.
 */

/** An answer that tells the writes by duration. */
export const SPLIT_CACHE_USAGE = {
  input_tokens: 1000,
  cache_creation_input_tokens: 2000,
  cache_read_input_tokens: 3000,
  output_tokens: 500,
  cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 1000 },
};

/** An older answer: the same 2,000 writes without the split, so all of them are 5-minute writes. */
export const UNSPLIT_CACHE_USAGE = {
  input_tokens: 1000,
  cache_creation_input_tokens: 2000,
  cache_read_input_tokens: 3000,
  output_tokens: 500,
};
