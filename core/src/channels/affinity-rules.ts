/**
 * Session affinity rules (docs/adr/0027): where a call names its session, so every call of a session goes to the
 * channel and key that served its first one and the provider's prompt cache stays warm. One option,
 * `ChannelAffinity`, holds them as JSON; the defaults cover Claude Code, Codex (and any client sending OpenAI's
 * `prompt_cache_key` or `user`), opencode, Gemini CLI and Gemini's cached contents. Pure: the relay reads them, the console edits them.
 */
import { z } from 'zod';

const ruleSchema = z
  .object({
    /** Names the rule in logs and keeps sessions of different rules apart. */
    name: z.string().trim().min(1, 'a rule needs a name').max(64, 'a rule name is too long'),
    /** Path prefixes the rule applies to (`/v1/messages`, `/v1beta/models/`). */
    paths: z
      .array(z.string().trim().startsWith('/', 'a path starts with /'), { error: 'paths must be a list' })
      .min(1, 'a rule needs at least one path'),
    /** A request header holding the session (any case). */
    header: z.string().trim().toLowerCase().min(1).optional(),
    /** A JSON body field holding the session, dotted for nesting (`metadata.user_id`). */
    body_field: z.string().trim().min(1).optional(),
    /** A regular expression whose first group is the session inside the value; the whole value when absent. */
    pattern: z
      .string()
      .optional()
      .refine((p) => {
        if (p === undefined) return true;
        try {
          new RegExp(p);
          return true;
        } catch {
          return false;
        }
      }, 'pattern must be a valid regular expression'),
  })
  .refine((r) => (r.header === undefined) !== (r.body_field === undefined), {
    message: 'a rule reads exactly one of header or body_field',
  });

export const channelAffinitySchema = z.object({
  enabled: z.boolean({ error: 'enabled must be true or false' }),
  /** How long a binding lives after the session's last call. */
  ttl_seconds: z
    .number({ error: 'ttl_seconds must be a number' })
    .int('ttl_seconds must be a whole number')
    .min(10, 'ttl_seconds must be 10 or more')
    .max(7 * 86_400, 'ttl_seconds must be a week or less'),
  /** Bindings held in memory when there is no Redis (oldest dropped first). */
  max_entries: z
    .number({ error: 'max_entries must be a number' })
    .int('max_entries must be a whole number')
    .min(100, 'max_entries must be 100 or more')
    .max(10_000_000, 'max_entries must be 10000000 or less'),
  rules: z.array(ruleSchema, { error: 'rules must be a list' }).max(32, 'at most 32 rules'),
});
export type ChannelAffinity = z.infer<typeof channelAffinitySchema>;
export type AffinityRule = ChannelAffinity['rules'][number];

export const DEFAULT_CHANNEL_AFFINITY: ChannelAffinity = {
  enabled: true,
  ttl_seconds: 3600,
  max_entries: 100_000,
  rules: [
    { name: 'claude-code', paths: ['/v1/messages'], header: 'x-claude-code-session-id' },
    {
      name: 'claude-code-metadata',
      paths: ['/v1/messages'],
      body_field: 'metadata.user_id',
      pattern: 'session_([0-9a-zA-Z-]+)',
    },
    {
      name: 'prompt-cache-key',
      paths: ['/v1/responses', '/v1/chat/completions'],
      body_field: 'prompt_cache_key',
    },
    { name: 'gemini-cached-content', paths: ['/v1beta/models/', '/v1/models/'], body_field: 'cachedContent' },
    {
      name: 'gemini-cached-content-snake',
      paths: ['/v1beta/models/', '/v1/models/'],
      body_field: 'cached_content',
    },
    // opencode names its session in a header on its own providers, and as prompt_cache_key with setCacheKey.
    {
      name: 'opencode-session',
      paths: ['/v1/chat/completions', '/v1/responses', '/v1/messages'],
      header: 'x-opencode-session',
    },
    { name: 'openai-user', paths: ['/v1/responses', '/v1/chat/completions'], body_field: 'user' },
    // Gemini CLI on an API key sends no session: its calls stay on one channel per token and model, which is
    // where the provider's implicit prompt cache is (bindings are kept per token, group and model).
    {
      name: 'gemini-cli',
      paths: ['/v1beta/models/', '/v1/models/'],
      header: 'user-agent',
      pattern: '^(GeminiCLI)[-/]',
    },
  ],
};

export const CHANNEL_AFFINITY_SHAPE =
  'a JSON object { enabled, ttl_seconds, max_entries, rules: [{ name, paths, header or body_field, pattern }] }';
