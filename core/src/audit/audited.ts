/**
 * An administrative change and its audit row, in one transaction (docs/adr/0045). The console API runs every
 * administrative route through this (api/src/modules/audit), the operator every change a custom resource makes:
 * the state of what the change touches is read before and after it, inside the same transaction, and the row
 * written last. When the row cannot be written the transaction rolls back and the change with it: a change never
 * exists without its row. A refused change (a rule, a missing row) rolls back too and leaves a row of its own.
 */
import { inOneTransaction } from '../db/ambient.ts';
import type { Db } from '../db/client.ts';
import { isDatabaseUnreachable } from '../db/unreachable.ts';
import { type AuditActorType, type AuditKind, AuditOutcome } from '../domain/closed-sets.ts';
import { AppError, isAppError } from '../errors.ts';
import type { EventBus } from '../events/bus.ts';
import { createAuditRepo } from '../repos/audit.repo.ts';
import { changesOf, maskDeep } from './changes.ts';

export interface AuditActor {
  readonly type: AuditActorType;
  /** The user's id; 0 for the operator. */
  readonly id: number;
  readonly name: string;
}

/** Where a change came from. */
export interface AuditOrigin {
  /** The route (`PUT /api/channel/`) or the resource (`Channel default/openai`). */
  readonly source: string;
  readonly ip?: string | undefined;
  readonly userAgent?: string | undefined;
  readonly requestId?: string | undefined;
  /** What was asked (a request's body): kept masked and cut. */
  readonly request?: unknown;
}

/** What a change touches, and how to read the state of each thing it touches. */
export interface AuditSubject<R> {
  readonly kind: AuditKind;
  readonly action: string;
  /** The ids known before the change (an update, a delete). */
  readonly targets?: (() => readonly string[] | Promise<readonly string[]>) | undefined;
  /** The ids known from its result only (a create). */
  readonly targetsOf?: ((result: R) => readonly string[]) | undefined;
  /** The state of one thing (undefined: it does not exist); without it the row says which, not how. */
  readonly load?: ((id: string) => Promise<unknown>) | undefined;
  /** The states of several things in one read (instead of `load` one by one). */
  readonly loadMany?: ((ids: readonly string[]) => Promise<ReadonlyMap<string, unknown>>) | undefined;
  /** The ids and their states before, in one read (instead of `targets` and loading them). */
  readonly snapshot?: (() => Promise<ReadonlyMap<string, unknown>>) | undefined;
  /** The states after, from the change's own answer (instead of reading them again). */
  readonly statesAfter?: ((result: R) => ReadonlyMap<string, unknown>) | undefined;
  /** A result that changed nothing (the operator's re-sync of an unchanged resource) leaves no row. */
  readonly unchanged?: ((result: R) => boolean) | undefined;
}

/** The request's body as the row keeps it: masked, at most this many characters of JSON. */
const REQUEST_CHARS = 8_192;

function requestText(request: unknown): string {
  if (request === undefined || request === null) return '';
  const text = JSON.stringify(maskDeep(request)) ?? '';
  return text.length > REQUEST_CHARS ? `${text.slice(0, REQUEST_CHARS)}…` : text;
}

const json = (value: unknown) => (value === null || value === undefined ? '' : JSON.stringify(value));
const fit = (text: string | undefined, max: number) => (text ?? '').slice(0, max);
const nowSeconds = () => Math.floor(Date.now() / 1000);

async function statesOf<R>(
  ids: readonly string[],
  subject: AuditSubject<R>,
): Promise<ReadonlyMap<string, unknown>> {
  if (subject.loadMany) return ids.length === 0 ? new Map() : subject.loadMany(ids);
  const states = new Map<string, unknown>();
  if (!subject.load) return states;
  for (const id of ids) states.set(id, await subject.load(id));
  return states;
}

export interface AuditDeps {
  /** The database from `followAmbientTransaction` (every runtime's). */
  readonly db: Db;
  readonly bus: EventBus;
}

/**
 * Runs `change` with its audit row in one transaction and answers its result. A refused or failed change throws
 * as it did, after its own row was written; a row that cannot be written fails the change with a 500.
 */
export async function audited<R>(
  deps: AuditDeps,
  actor: AuditActor,
  origin: AuditOrigin,
  subject: AuditSubject<R>,
  change: () => Promise<R>,
  /** Told the config version the change's events went out under, once they have. */
  onPublished?: (version: number) => void,
): Promise<R> {
  const repo = createAuditRepo(deps.db);
  const base = {
    actorType: actor.type,
    actorId: actor.id,
    actorName: fit(actor.name, 128),
    kind: subject.kind,
    action: fit(subject.action, 64),
    source: fit(origin.source, 255),
    ip: fit(origin.ip, 64),
    userAgent: fit(origin.userAgent, 255),
    requestId: fit(origin.requestId, 64),
    request: requestText(origin.request),
  };
  let targets: readonly string[] = [];
  try {
    return await inOneTransaction(
      deps.db,
      deps.bus,
      async () => {
        let before: ReadonlyMap<string, unknown>;
        if (subject.snapshot) {
          before = await subject.snapshot();
          targets = [...before.keys()];
        } else {
          targets = (await subject.targets?.()) ?? [];
          before = await statesOf(targets, subject);
        }
        const result = await change();
        if (subject.unchanged?.(result)) return result;
        const ids = [...new Set([...targets, ...(subject.targetsOf?.(result) ?? [])])];
        targets = ids;
        const after = subject.statesAfter ? subject.statesAfter(result) : await statesOf(ids, subject);
        const { before: was, after: now } = changesOf(ids, before, after);
        try {
          await repo.insert({
            ...base,
            createdAt: nowSeconds(),
            targetIds: ids.join(','),
            outcome: AuditOutcome.Ok,
            before: json(was),
            after: json(now),
          });
        } catch (error) {
          throw new AuditWriteFailed(error);
        }
        return result;
      },
      onPublished,
    );
  } catch (error) {
    if (error instanceof AuditWriteFailed) {
      // The database gone is told as such (a 503 to try again); any other failure is the gateway's own.
      if (isDatabaseUnreachable(error.cause)) throw error.cause;
      throw new AppError('INTERNAL', 'the change was not made: its audit record could not be written', {
        cause: error.cause,
      });
    }
    // The change was refused or failed and rolled back: the attempt is recorded on its own.
    const refused = isAppError(error) && error.status < 500;
    // Nothing was kept; a row that cannot be written either leaves the caller's error as it is.
    await repo
      .insert({
        ...base,
        createdAt: nowSeconds(),
        targetIds: targets.join(','),
        outcome: refused ? AuditOutcome.Refused : AuditOutcome.Failed,
        message: fit(error instanceof Error ? error.message : String(error), 1_000),
      })
      .catch(() => undefined);
    throw error;
  }
}

/** The audit row of a change could not be written: the transaction rolls back. */
class AuditWriteFailed extends Error {
  constructor(cause: unknown) {
    super('the audit record could not be written', { cause });
    this.name = 'AuditWriteFailed';
  }
}
