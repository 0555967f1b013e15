/**
 * Bringing a batch up to date from its upstream, and ending it: when the upstream says it ended, its results are
 * read, kept as the batch's output and error files, each served line billed from its usage and the rest of the
 * hold given back (books.ts, once). Called by the task poller for every open batch, and by a read of one.
 */

import type { Pricing } from '@turnpike/core/billing/ratios';
import type { Batch, NewLog } from '@turnpike/core/db/schema/index';
import { batches, files } from '@turnpike/core/db/schema/index';
import { and, eq } from 'drizzle-orm';
import { fileStoreOf, OUTPUT_PURPOSE, storeFile } from '../files/files.ts';
import { normaliseOpenAiUsage } from '../metering/usage.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { batchApiOf } from './apis.ts';
import { isFinal } from './batch-object.ts';
import { type BatchEnd, type LineCharge, settleBatch } from './books.ts';
import { gatewayResults, runGatewayLines } from './gateway-run.ts';
import { type BatchMode, isBatchPriced, lineSettlement } from './price.ts';
import type { BatchResults, OutputLine, UpstreamState } from './upstream.ts';

/** A batch that never got an upstream id this long after its creation was never submitted: it fails. */
const UNSUBMITTED_GRACE_SECONDS = 600;

/** The log of one billed line: which batch and line, and at what price. */
function describeLine(mode: BatchMode) {
  return (line: LineCharge, batch: Batch): Pick<NewLog, 'content' | 'other'> => ({
    content: `batch ${batch.id} line ${line.customId}${isBatchPriced(mode) ? ', batch price' : ''}`,
    other: JSON.stringify({
      batch_id: batch.id,
      custom_id: line.customId,
      batch_price: isBatchPriced(mode),
      ...(line.cachedTokens ? { cache_tokens: line.cachedTokens } : {}),
    }),
  });
}

/** Ends a batch with nothing served: the whole hold goes back. */
export async function failBatch(ctx: RelayContext, id: string, reason: string): Promise<void> {
  await settleBatch(
    ctx.deps.db,
    ctx.deps.bus,
    id,
    [],
    {
      status: 'failed',
      completed: 0,
      failed: 0,
      errors: {
        object: 'list',
        data: [{ code: 'upstream_error', message: reason, line: null, param: null }],
      },
      now: Math.floor(Date.now() / 1000),
    },
    describeLine('gateway'),
  );
}

/** The bills of the served lines of an output file. */
export function chargesOf(
  results: BatchResults,
  pricing: Pricing,
  mode: BatchMode,
  quotaPerUnit: number,
): LineCharge[] {
  const charges: LineCharge[] = [];
  for (const line of results.output) {
    const response = line.response;
    if (!response || response.status_code < 200 || response.status_code >= 300) continue;
    const usage =
      results.usage?.get(line.custom_id) ??
      normaliseOpenAiUsage((response.body as { usage?: unknown } | null)?.usage);
    if (!usage) continue;
    const { quota } = lineSettlement(pricing, mode, usage, quotaPerUnit);
    charges.push({
      customId: line.custom_id,
      quota,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      cachedTokens: usage.cachedTokens,
    });
  }
  return charges;
}

const toJsonl = (lines: readonly OutputLine[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;

/** Reads the results of an ended upstream batch, keeps them as files and settles the batch (once). */
async function endBatch(ctx: RelayContext, row: Batch, state: UpstreamState): Promise<void> {
  const api = batchApiOf(row.mode as BatchMode);
  const channel = ctx.channels.get(row.channelId);
  if (!api || !channel) return;
  const results = await api.results(channel, ctx.upstream.dispatcherFor(channel.proxy), state, row.model);
  const charges = chargesOf(
    results,
    row.pricing as Pricing,
    row.mode as BatchMode,
    ctx.deps.options.get('QuotaPerUnit'),
  );
  await keepAndSettle(ctx, row, {
    status: state.status as BatchEnd['status'],
    output: results.output,
    errors: results.errors,
    charges,
    failed: results.output.length - charges.length + results.errors.length,
    upstreamErrors: state.errors,
  });
}

/** Ends a batch the gateway ran itself with the lines answered so far. */
async function endGatewayBatch(ctx: RelayContext, row: Batch, status: BatchEnd['status']): Promise<void> {
  const { charges, output, errors } = await gatewayResults(ctx, row.id);
  await keepAndSettle(ctx, row, { status, output, errors, charges, failed: errors.length });
}

/** Keeps a batch's output and error lines as its files and settles it (once). */
async function keepAndSettle(
  ctx: RelayContext,
  row: Batch,
  ended: {
    status: BatchEnd['status'];
    output: readonly OutputLine[];
    errors: readonly OutputLine[];
    charges: readonly LineCharge[];
    failed: number;
    upstreamErrors?: unknown;
  },
): Promise<void> {
  const owner = { userId: row.userId, tokenId: row.tokenId };
  const keep = async (lines: readonly OutputLine[], suffix: string) =>
    lines.length === 0
      ? undefined
      : await storeFile(ctx, owner, {
          purpose: OUTPUT_PURPOSE,
          filename: `${row.id}_${suffix}.jsonl`,
          content: Buffer.from(toJsonl(lines)),
        });
  const outputFile = await keep(ended.output, 'output');
  const errorFile = await keep(ended.errors, 'error');
  const end: BatchEnd = {
    status: ended.status,
    completed: ended.charges.length,
    failed: ended.failed,
    outputFileId: outputFile?.id,
    errorFileId: errorFile?.id,
    ...(ended.upstreamErrors === undefined ? {} : { errors: ended.upstreamErrors }),
    now: Math.floor(Date.now() / 1000),
  };
  const mode = row.mode as BatchMode;
  const settled = await settleBatch(
    ctx.deps.db,
    ctx.deps.bus,
    row.id,
    ended.charges,
    end,
    describeLine(mode),
  );
  if (!settled) {
    // Another process ended it first: the files kept here are nobody's.
    for (const file of [outputFile, errorFile]) if (file) await deleteKept(ctx, file.id);
  }
}

async function deleteKept(ctx: RelayContext, id: string) {
  await ctx.deps.db.delete(files).where(eq(files.id, id));
  await fileStoreOf(ctx).delete(id);
}

/** Moments of the states a batch passed through, as OpenAI's object has them. */
function stepsOf(row: Batch, status: string, now: number) {
  return {
    ...(status !== 'validating' && row.inProgressAt === null ? { inProgressAt: now } : {}),
    ...(status === 'finalizing' && row.finalizingAt === null ? { finalizingAt: now } : {}),
    ...(status === 'cancelling' && row.cancellingAt === null ? { cancellingAt: now } : {}),
  };
}

/**
 * The batch brought up to date (ended and settled when its upstream says it ended). A batch the gateway runs
 * itself ends here on cancel or expiry; its lines are answered only with `runLines` (the lease holder's pass).
 */
export async function refreshBatch(
  ctx: RelayContext,
  row: Batch,
  options: { runLines?: boolean } = {},
): Promise<Batch> {
  if (row.settledAt > 0) return row;
  const now = Math.floor(Date.now() / 1000);
  if (row.mode === 'gateway') {
    if (row.status === 'cancelling') await endGatewayBatch(ctx, row, 'cancelled');
    else if (now > row.expiresAt) await endGatewayBatch(ctx, row, 'expired');
    else if (options.runLines && (await runGatewayLines(ctx, row)))
      await endGatewayBatch(ctx, row, 'completed');
    return reread(ctx, row);
  }
  const api = batchApiOf(row.mode as BatchMode);
  if (!api) return row;
  if (row.upstreamId === '') {
    if (now - row.createdAt > UNSUBMITTED_GRACE_SECONDS)
      await failBatch(ctx, row.id, 'the batch was never submitted upstream');
    return reread(ctx, row);
  }
  const channel = ctx.channels.get(row.channelId);
  if (!channel) return row;
  let state: UpstreamState;
  try {
    state = await api.state(channel, ctx.upstream.dispatcherFor(channel.proxy), row.upstreamId);
  } catch (err) {
    ctx.log.warn({ err, batchId: row.id }, 'could not read a batch upstream');
    return row;
  }
  if (isFinal(state.status)) {
    await endBatch(ctx, row, state);
    return reread(ctx, row);
  }
  // A cancel the gateway asked for stays `cancelling` until the upstream says otherwise.
  const status = row.status === 'cancelling' && state.status !== 'cancelled' ? 'cancelling' : state.status;
  await ctx.deps.db
    .update(batches)
    .set({ status, completed: state.completed, failed: state.failed, ...stepsOf(row, status, now) })
    .where(and(eq(batches.id, row.id), eq(batches.settledAt, 0)));
  return reread(ctx, row);
}

async function reread(ctx: RelayContext, row: Batch): Promise<Batch> {
  const [fresh] = await ctx.deps.db.select().from(batches).where(eq(batches.id, row.id));
  return fresh ?? row;
}
