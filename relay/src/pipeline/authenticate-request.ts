/**
 * Token auth of one Fastify request with the current options; a token found expired or spent is given that
 * status in the database (only while still enabled, so an operator's own status is never overwritten) and the
 * other processes are told. That write is not awaited by the request.
 */

import { tokens } from '@turnpike/core/db/schema/index';
import { TokenStatus } from '@turnpike/core/domain/tokens';
import { and, eq } from 'drizzle-orm';
import type { RelayRequest } from '../contract.ts';
import { type AuthResult, authenticate } from './authenticate.ts';
import type { RelayContext } from './context.ts';

export async function authenticateRequest(ctx: RelayContext, request: RelayRequest): Promise<AuthResult> {
  const { options } = ctx.deps;
  const result = await authenticate(ctx.auth, {
    authorization: request.headers.authorization,
    ip: request.ip,
    selectableGroups: options.get('UserUsableGroups'),
    groupRatio: options.get('GroupRatio'),
    nowSeconds: Math.floor(Date.now() / 1000),
  });
  if (!result.ok && result.markToken) {
    const { id, status } = result.markToken;
    void markToken(ctx, id, status).catch((err: unknown) =>
      request.log.error({ err, tokenId: id }, 'could not store a token status'),
    );
  }
  return result;
}

async function markToken(ctx: RelayContext, id: number, status: TokenStatus): Promise<void> {
  const changed = await ctx.deps.db
    .update(tokens)
    .set({ status })
    .where(and(eq(tokens.id, id), eq(tokens.status, TokenStatus.Enabled)))
    .returning({ id: tokens.id });
  if (changed.length > 0) await ctx.deps.bus.publish({ type: 'tokens.changed', ids: [id] });
}
