/**
 * Files and batches as a task provider (tasks/provider.ts): its routes (`/v1/files`, `/v1/batches`) in a scope that
 * answers in OpenAI's shape, and a poll pass that brings every open batch up to date and ends the finished ones, run
 * by the task poller in the one process holding the lease. A batch settles once whoever ends it (books.ts), so a
 * relay killed mid-batch leaves it to the next lease holder.
 */
import { batches } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import type { FastifyError, FastifyInstance } from 'fastify';
import { DATABASE_RETRY_AFTER_SECONDS, gatewayFailureOf, toOpenAiErrorBody } from '../errors.ts';
import { registerFileRoutes } from '../files/files.ts';
import { refreshOpenJobs, registerFineTuningRoutes } from '../fine-tuning/fine-tuning.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { EMPTY_REPORT, type PollReport, type TaskProvider } from '../tasks/provider.ts';
import { BATCH_CHANNEL_TYPES, registerBatchRoutes } from './batches.ts';
import { refreshBatch } from './refresh.ts';

export const batchProvider: TaskProvider = {
  id: 'batches',
  carries: 'batches',
  channelTypes: BATCH_CHANNEL_TYPES,
  register(app: FastifyInstance, ctx: RelayContext) {
    // A scope without a prefix (paths in full): a `/v1` prefix would take over the 404s of every other /v1 path.
    app.register(async (v1) => {
      v1.setErrorHandler((error: FastifyError, request, reply) => {
        const failure = gatewayFailureOf(error);
        if (failure.status === 500) request.log.error({ err: error }, 'files or batches request failed');
        if (failure.status === 503) reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
        return reply.code(failure.status).send(toOpenAiErrorBody(failure, request.id));
      });
      // Uploads are read by the file route itself, up to OpenAI's limit of a file.
      v1.addContentTypeParser('multipart/form-data', (_request, payload, done) => done(null, payload));
      registerFileRoutes(v1, ctx);
      registerBatchRoutes(v1, ctx);
      registerFineTuningRoutes(v1, ctx);
    });
  },
  async poll(ctx, settings): Promise<PollReport> {
    const open = await ctx.deps.db
      .select()
      .from(batches)
      .where(eq(batches.settledAt, 0))
      .limit(settings.batch);
    let updated = 0;
    let refunded = 0;
    let refundedQuota = 0;
    for (const row of open) {
      try {
        const after = await refreshBatch(ctx, row, { runLines: true });
        if (after.status !== row.status || after.completed !== row.completed) updated += 1;
        if (after.settledAt > 0) {
          refunded += 1;
          refundedQuota += after.held - after.charged;
        }
      } catch (err) {
        ctx.log.warn({ err, batchId: row.id }, 'could not bring a batch up to date');
      }
    }
    const jobs = await refreshOpenJobs(ctx, settings.batch);
    return open.length + jobs === 0
      ? EMPTY_REPORT
      : { polled: open.length + jobs, updated, refunded, refundedQuota };
  },
};
