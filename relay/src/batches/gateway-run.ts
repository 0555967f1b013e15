/**
 * A batch on a channel without a Batch API of its own (`mode` = `gateway`): the lease holder's poll pass runs a
 * few of its lines at a time ({@link LINES_PER_PASS}, {@link LINES_AT_ONCE}: a bounded pace beside live traffic),
 * each through the channel's provider as a non-stream call, billed at the model's normal price. Each answered line
 * is kept in `batch_results` (one row per line, whoever answers it), so a relay that dies mid-batch leaves the rest
 * to the next lease holder; when every line is answered, or on cancel or expiry, the rows become the output and
 * error files and the batch settles once (books.ts).
 */
import type { Pricing } from '@turnpike/core/billing/ratios';
import { type Batch, batches, batchResults } from '@turnpike/core/db/schema/index';
import { isRecord, type Json } from '@turnpike/core/json';
import { and, eq, sql } from 'drizzle-orm';
import type { Endpoint, NormalisedUsage } from '../contract.ts';
import { fileStoreOf } from '../files/files.ts';
import { normaliseOpenAiUsage } from '../metering/usage.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { providerFor } from '../providers/registry.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import type { LineCharge } from './books.ts';
import { type BatchLine, parseBatchInput } from './input.ts';
import { lineSettlement } from './price.ts';
import type { OutputLine } from './upstream.ts';

export const LINES_PER_PASS = 20;
export const LINES_AT_ONCE = 2;
const LINE_TIMEOUT_MS = 120_000;
const ANSWER_LIMIT = 8 * 1024 * 1024;

/** The endpoints the gateway runs itself: chat for every provider, embeddings where the provider serves them. */
export const GATEWAY_ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map<string, Endpoint>([
  ['/v1/chat/completions', 'chat'],
  ['/v1/embeddings', 'embeddings'],
]);

interface Answered {
  readonly output: OutputLine;
  readonly served: boolean;
  readonly usage: NormalisedUsage | undefined;
}

const errorLine = (line: BatchLine, status: number, message: string, code: string): Answered => ({
  output: {
    id: `batch_req_${line.customId}`,
    custom_id: line.customId,
    response: {
      status_code: status,
      request_id: '',
      body: { error: { message, type: 'upstream_error', code } },
    },
    error: null,
  },
  served: false,
  usage: undefined,
});

/** One line through the channel's provider, as the relay would send it without streaming. */
async function answerLine(ctx: RelayContext, channel: RelayChannel, line: BatchLine): Promise<Answered> {
  const endpoint = GATEWAY_ENDPOINTS.get(line.url);
  const model = String(line.body.model);
  const upstreamModel = channel.modelMapping[model] ?? model;
  const provider = providerFor(channel.type, upstreamModel);
  if (!endpoint || !provider?.supports(endpoint))
    return errorLine(line, 400, `this channel does not serve ${line.url}`, 'unsupported_endpoint');
  try {
    const call = await provider.buildRequest(channel, {
      endpoint,
      payload: { kind: 'json', body: { ...line.body, model: upstreamModel, stream: false } as Json },
      upstreamModel,
      isStream: false,
      options: ctx.deps.options,
    });
    const answered = await ctx.upstream.request({
      url: call.url,
      headers: call.headers,
      body: call.body,
      proxy: channel.proxy,
      signal: AbortSignal.timeout(LINE_TIMEOUT_MS),
      headersTimeoutMs: LINE_TIMEOUT_MS,
      bodyTimeoutMs: LINE_TIMEOUT_MS,
    });
    const response =
      answered.status === 200 && provider.checkAnswer ? await provider.checkAnswer(answered) : answered;
    const text = await response.readText(ANSWER_LIMIT);
    if (response.status !== 200) {
      const error = provider.readError(response.status, text, response.headers);
      return errorLine(line, response.status, error.message, String(error.code ?? 'upstream_error'));
    }
    const parsed = JSON.parse(text) as unknown;
    if (!isRecord(parsed))
      return errorLine(line, 502, 'the upstream answer is not JSON', 'bad_response_body');
    const converted =
      provider.format.id !== 'openai' && endpoint === 'chat'
        ? provider.format.answerToChat(parsed, model)
        : { answer: parsed, usage: normaliseOpenAiUsage(parsed.usage) };
    return {
      output: {
        id: `batch_req_${line.customId}`,
        custom_id: line.customId,
        response: { status_code: 200, request_id: '', body: converted.answer },
        error: null,
      },
      served: true,
      usage: converted.usage,
    };
  } catch (err) {
    ctx.log.warn({ err, channelId: channel.id }, 'a batch line could not be answered');
    return errorLine(line, 502, 'the upstream could not be reached', 'do_request_failed');
  }
}

/** The answered lines of a batch, as charges and as output and error lines. */
export async function gatewayResults(ctx: RelayContext, batchId: string) {
  const rows = await ctx.deps.db
    .select()
    .from(batchResults)
    .where(eq(batchResults.batchId, batchId))
    .orderBy(batchResults.line);
  const charges: LineCharge[] = rows
    .filter((row) => row.served === 1)
    .map((row) => ({
      customId: row.customId,
      quota: row.quota,
      promptTokens: row.promptTokens,
      completionTokens: row.completionTokens,
    }));
  return {
    charges,
    output: rows.filter((row) => row.served === 1).map((row) => row.output as OutputLine),
    errors: rows.filter((row) => row.served !== 1).map((row) => row.output as OutputLine),
  };
}

/**
 * Answers the next lines of a gateway batch; true when every line is answered (or the input is gone, which ends
 * the batch with what was answered).
 */
export async function runGatewayLines(ctx: RelayContext, row: Batch): Promise<boolean> {
  const channel = ctx.channels.get(row.channelId);
  if (!channel?.key) return false;
  const content = await fileStoreOf(ctx).get(row.inputFileId);
  const parsed = content && parseBatchInput(content);
  if (!parsed?.ok) return true;
  const answered = new Set(
    (
      await ctx.deps.db
        .select({ line: batchResults.line })
        .from(batchResults)
        .where(eq(batchResults.batchId, row.id))
    ).map((result) => result.line),
  );
  const next = parsed.lines
    .map((line, index) => ({ line, index }))
    .filter(({ index }) => !answered.has(index))
    .slice(0, LINES_PER_PASS);
  if (next.length === 0) return true;
  const pricing = row.pricing as Pricing;
  const quotaPerUnit = ctx.deps.options.get('QuotaPerUnit');
  for (let start = 0; start < next.length; start += LINES_AT_ONCE) {
    await Promise.all(
      next.slice(start, start + LINES_AT_ONCE).map(async ({ line, index }) => {
        const result = await answerLine(ctx, channel, line);
        const usage = result.usage;
        await ctx.deps.db
          .insert(batchResults)
          .values({
            batchId: row.id,
            line: index,
            customId: line.customId,
            served: result.served ? 1 : 0,
            output: result.output,
            quota: result.served && usage ? lineSettlement(pricing, 'gateway', usage, quotaPerUnit).quota : 0,
            promptTokens: usage?.promptTokens ?? 0,
            completionTokens: usage?.completionTokens ?? 0,
          })
          .onConflictDoNothing();
      }),
    );
  }
  const [counts] = await ctx.deps.db
    .select({
      served: sql<number>`coalesce(sum(${batchResults.served}), 0)::int`,
      all: sql<number>`count(*)::int`,
    })
    .from(batchResults)
    .where(eq(batchResults.batchId, row.id));
  await ctx.deps.db
    .update(batches)
    .set({
      status: row.status === 'cancelling' ? 'cancelling' : 'in_progress',
      completed: counts?.served ?? 0,
      failed: (counts?.all ?? 0) - (counts?.served ?? 0),
      inProgressAt: row.inProgressAt ?? Math.floor(Date.now() / 1000),
    })
    .where(and(eq(batches.id, row.id), eq(batches.settledAt, 0)));
  return (counts?.all ?? 0) >= parsed.lines.length;
}
