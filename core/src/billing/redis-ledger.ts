/**
 * The ledger shared by every relay process through Redis (docs/adr/0016). Each account has, under one hash tag
 * so one script can touch them together (Redis Cluster included):
 * - `base:<account>`: hash `{ b: balance, v: ledger_version }` read from the database;
 * - `out:<account>`: holds plus charges not written yet, of every process;
 * - `ver:<account>`: the highest ledger_version a writer has reported.
 * A check and its hold, a settlement, and a writer's report are each one script, so they are atomic across
 * processes. A hold is the one Redis round trip on the request path; a settlement that does not exceed its hold
 * is sent without waiting for the answer.
 *
 * **Quota windows** (docs/adr/0043) are accounts of the same kind, one per slot (`w:<windowKey>@<slotStart>`), and
 * ride the same scripts: the hold checks each window the call brings (its limit, its slot of now and how many slots
 * it counts) beside the balances, and takes from all or none. The script names a window's slots itself from the slot
 * and the bucket length (a rolling window counts 60), under the same hash tag, so a call with windows still costs one
 * round trip; a call without any sends what it sent before windows existed.
 *
 * **Which process owes what.** Each process registers under a random id with a lease (`lease:<id>`, renewed
 * every `renewMs`) and records its share of every outstanding amount in `proc:<id>`. A process whose lease ran out
 * (it crashed, or stalled) is reaped by any live one: its shares leave the outstanding amounts and the bases they
 * touched are read again. So nothing a dead process held stays taken longer than the lease.
 *
 * **Redis trouble.** Every amount this process owes is also kept here (`localOut`). When a call to Redis fails, the
 * process gives up its id and admits on its own view: at most `last known available / live relays` per account
 * until Redis answers again (`holdDegraded`), trying Redis again every `retryMs`. Then it registers under a new
 * id with everything it owes (reaping the old id in the same script), and bases its failed reports may have left
 * too high are read again. A failed call is never retried blindly, so an amount is never applied twice.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  type Account,
  type BaseLoader,
  chargeOf,
  countedAccounts,
  type Hold,
  type HoldResult,
  heldOn,
  type JournalEntry,
  type Ledger,
  newHold,
  type OrphanWriter,
  type SettleResult,
  type WindowAccount,
  type WindowClaim,
  type WindowRefusal,
  type WrittenDebit,
  windowAmount,
  windowChargesOf,
} from './ledger.ts';

/**
 * Shared pieces of the scripts: `reap(pid, keep)` returns a dead process's holds and marks the bases they touched
 * stale: read again at the next hold, but still used while the database cannot be read (the dead process may have
 * written a debit it never reported, which only an unjournaled charge can be: rare, and said in docs/adr/0022).
 * Its journal (settled writes not in the database yet, `jrn:` per account and the `journal:` stream) is kept as an
 * orphan for any process to write when `keep` is set, so those charges stay outstanding until they are written;
 * a process re-registering drops its own old journal instead, since it journals what it still owes again.
 */
const REAP_FUNCTION = `
local function release(p, hash, forget)
  local entries = redis.call('HGETALL', hash)
  for i = 1, #entries, 2 do
    local out, base = p .. 'out:' .. entries[i], p .. 'base:' .. entries[i]
    if redis.call('DECRBY', out, entries[i + 1]) == 0 then redis.call('DEL', out) end
    if forget then
      redis.call('DEL', base)
    elseif redis.call('EXISTS', base) == 1 then
      redis.call('HSET', base, 's', '1')
    end
  end
end
local function reap(p, procs, pid, keep)
  release(p, p .. 'proc:' .. pid, false)
  local jrn, stream = p .. 'jrn:' .. pid, p .. 'journal:' .. pid
  if keep and (redis.call('EXISTS', jrn) == 1 or redis.call('XLEN', stream) > 0) then
    redis.call('SADD', p .. 'orphans', pid)
  else
    release(p, jrn, false)
    redis.call('DEL', jrn, stream)
  end
  redis.call('DEL', p .. 'proc:' .. pid, p .. 'lease:' .. pid)
  redis.call('SREM', procs, pid)
end
`;

/**
 * Shared pieces of the scripts that check quota windows. `windowLeft(p, prefix, slot, step, slots, limit, stale,
 * missing)`: a window's limit less what its counted slots (`slot`, and `slots - 1` before it, `step` seconds apart)
 * spent and hold, or nil when a slot's base is missing (or stale, unless `stale`), those slots added to `missing`.
 * `freeAt(...)`: the Unix second from which a rolling window has `need` left, its oldest buckets leaving it one by
 * one (0 for a calendar window, or when even an empty window would not).
 */
const WINDOW_FUNCTIONS = `
local function slotName(prefix, slot, step, k)
  return prefix .. string.format('%d', slot - k * step)
end
local function windowLeft(p, prefix, slot, step, slots, limit, stale, missing)
  local left = limit
  local known = true
  for k = 0, slots - 1 do
    local name = slotName(prefix, slot, step, k)
    local v = redis.call('HMGET', p .. 'base:' .. name, 'b', 's')
    if v[1] and (stale or not v[2]) then
      left = left + tonumber(v[1]) - tonumber(redis.call('GET', p .. 'out:' .. name) or '0')
    else
      known = false
      if missing then missing[#missing + 1] = name end
    end
  end
  if known then return left end
  return nil
end
local function freeAt(p, prefix, slot, step, slots, left, need)
  if step == 0 then return 0 end
  local freed = left
  for k = slots - 1, 0, -1 do
    local name = slotName(prefix, slot, step, k)
    freed = freed - tonumber(redis.call('HGET', p .. 'base:' .. name, 'b') or '0')
      + tonumber(redis.call('GET', p .. 'out:' .. name) or '0')
    if freed >= need and freed > 0 then return slot - k * step + slots * step end
  end
  return 0
end
`;

/**
 * KEYS: lease, proc, then base and out per account. ARGV: amount, '1' to accept a stale base (the database cannot
 * be read), key prefix, the account names, then six per window: its slots' name prefix (`w:<key>@`), slot, step,
 * slots, limit, amount. Answers {1, what each account and window has left after the hold}, {0, refused account's
 * index, what it has, refused window's index, what it has, when it frees} (index 0: none), {-2, names of the slots
 * and accounts whose base must be read}, or {-1} when this process was reaped.
 */
const HOLD = `${WINDOW_FUNCTIONS}
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
local amount = tonumber(ARGV[1])
local stale = ARGV[2] == '1'
local p = ARGV[3]
local n = (#KEYS - 2) / 2
local w = (#ARGV - 3 - n) / 6
local missing = {}
local left = {}
for i = 1, n do
  local v = redis.call('HMGET', KEYS[1 + 2 * i], 'b', 's')
  if v[1] and (stale or not v[2]) then
    left[i] = tonumber(v[1]) - tonumber(redis.call('GET', KEYS[2 + 2 * i]) or '0')
  else
    missing[#missing + 1] = ARGV[3 + i]
  end
end
for j = 1, w do
  local o = 3 + n + 6 * (j - 1)
  left[n + j] = windowLeft(p, ARGV[o + 1], tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4]),
    tonumber(ARGV[o + 5]), stale, missing)
end
if #missing > 0 then
  table.insert(missing, 1, -2)
  return missing
end
local balance, window = 0, 0
for i = 1, n do
  if left[i] < amount or left[i] <= 0 then
    balance = i
    break
  end
end
for j = 1, w do
  local need = tonumber(ARGV[3 + n + 6 * j])
  if left[n + j] < need or left[n + j] <= 0 then
    window = j
    break
  end
end
if balance > 0 or window > 0 then
  local answer = {0, balance, 0, window, 0, 0}
  if balance > 0 then answer[3] = left[balance] end
  if window > 0 then
    local o = 3 + n + 6 * (window - 1)
    answer[5] = left[n + window]
    answer[6] = freeAt(p, ARGV[o + 1], tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4]),
      left[n + window], tonumber(ARGV[o + 6]))
  end
  return answer
end
local answer = {1}
for i = 1, n do
  redis.call('INCRBY', KEYS[2 + 2 * i], ARGV[1])
  redis.call('HINCRBY', KEYS[2], ARGV[3 + i], ARGV[1])
  answer[1 + i] = left[i] - amount
end
for j = 1, w do
  local o = 3 + n + 6 * (j - 1)
  local name, need = ARGV[o + 1] .. ARGV[o + 2], ARGV[o + 6]
  if need ~= '0' then
    redis.call('INCRBY', p .. 'out:' .. name, need)
    redis.call('HINCRBY', KEYS[2], name, need)
  end
  answer[1 + n + j] = left[n + j] - tonumber(need)
end
return answer`;

/**
 * KEYS: base and ver per account. ARGV: ttl ms, then balance and version per account. Per account, 1 when a fresh
 * base is there now (one marked stale is replaced), 0 when the read was older than a debit already reported.
 */
const INIT = `
local answer = {}
for i = 1, #KEYS / 2 do
  local base, ver = KEYS[2 * i - 1], KEYS[2 * i]
  if redis.call('EXISTS', base) == 1 and redis.call('HEXISTS', base, 's') == 0 then
    answer[i] = 1
  elseif tonumber(ARGV[2 * i + 1]) < tonumber(redis.call('GET', ver) or '0') then
    answer[i] = 0
  else
    redis.call('DEL', base)
    redis.call('HSET', base, 'b', ARGV[2 * i], 'v', ARGV[2 * i + 1])
    redis.call('PEXPIRE', base, ARGV[1])
    answer[i] = 1
  end
end
return answer`;

/**
 * KEYS: lease, proc, then base and out per account. ARGV: hold, bill, key prefix, the account names, then seven
 * per window: name prefix, slot, step, slots, limit, amount held, charge ('q': the quota charged; else that many).
 * A bill over the hold is charged as far as the balances and the quota windows have room.
 */
const SETTLE = `${WINDOW_FUNCTIONS}
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0} end
local hold = tonumber(ARGV[1])
local bill = tonumber(ARGV[2])
local p = ARGV[3]
local n = (#KEYS - 2) / 2
local w = (#ARGV - 3 - n) / 7
local charged = bill
if bill > hold then
  local room = nil
  for i = 1, n do
    local b = redis.call('HGET', KEYS[1 + 2 * i], 'b')
    local r = hold
    if b then r = tonumber(b) - (tonumber(redis.call('GET', KEYS[2 + 2 * i]) or '0') - hold) end
    if room == nil or r < room then room = r end
  end
  for j = 1, w do
    local o = 3 + n + 7 * (j - 1)
    if ARGV[o + 7] == 'q' then
      local left = windowLeft(p, ARGV[o + 1], tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4]),
        tonumber(ARGV[o + 5]), true, nil)
      local r = hold
      if left then r = left + tonumber(ARGV[o + 6]) end
      if room == nil or r < room then room = r end
    end
  end
  charged = math.max(hold, math.min(bill, room))
end
local delta = string.format('%d', charged - hold)
if charged ~= hold then
  for i = 1, n do
    if redis.call('INCRBY', KEYS[2 + 2 * i], delta) == 0 then redis.call('DEL', KEYS[2 + 2 * i]) end
    if redis.call('HINCRBY', KEYS[2], ARGV[3 + i], delta) == 0 then redis.call('HDEL', KEYS[2], ARGV[3 + i]) end
  end
end
for j = 1, w do
  local o = 3 + n + 7 * (j - 1)
  local charge = charged
  if ARGV[o + 7] ~= 'q' then charge = tonumber(ARGV[o + 7]) end
  local change = charge - tonumber(ARGV[o + 6])
  if change ~= 0 then
    local name, text = ARGV[o + 1] .. ARGV[o + 2], string.format('%d', change)
    if redis.call('INCRBY', p .. 'out:' .. name, text) == 0 then redis.call('DEL', p .. 'out:' .. name) end
    if redis.call('HINCRBY', KEYS[2], name, text) == 0 then redis.call('HDEL', KEYS[2], name) end
  end
end
return {1, charged}`;

/**
 * KEYS: lease, proc, jrn, stream, then base, out, ver per account. ARGV: journal entries written up to ('' for
 * none), ttl ms, then name, amount, version, reread ('1' or '0') per account. A written amount leaves the journal's
 * share of the account first, the process's own share for the rest (a charge settled while Redis was away). A
 * reread account's base is dropped instead of lowered (its debit was written by another process).
 */
const WRITTEN = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local n = (#KEYS - 4) / 3
local ttl = ARGV[2]
for i = 1, n do
  local base, out, ver = KEYS[3 * i + 2], KEYS[3 * i + 3], KEYS[3 * i + 4]
  local name, amount, version, reread = ARGV[4 * i - 1], ARGV[4 * i], tonumber(ARGV[4 * i + 1]), ARGV[4 * i + 2]
  if redis.call('DECRBY', out, amount) == 0 then redis.call('DEL', out) end
  local left = redis.call('HINCRBY', KEYS[3], name, '-' .. amount)
  if left <= 0 then
    redis.call('HDEL', KEYS[3], name)
    if left < 0 and redis.call('HINCRBY', KEYS[2], name, string.format('%d', left)) == 0 then
      redis.call('HDEL', KEYS[2], name)
    end
  end
  if reread == '1' then
    redis.call('DEL', base)
  else
    local bv = redis.call('HGET', base, 'v')
    if bv and tonumber(bv) < version then redis.call('HINCRBY', base, 'b', '-' .. amount) end
  end
  if version > tonumber(redis.call('GET', ver) or '0') then redis.call('SET', ver, ARGV[4 * i + 1], 'PX', ttl) end
end
if ARGV[1] ~= '' then redis.call('XTRIM', KEYS[4], 'MINID', ARGV[1] .. '-1') end
return 1`;

/**
 * KEYS: lease, proc, jrn, stream. ARGV: seq, record, key prefix, n, then n (name, change) pairs of settlements whose
 * charge was known when settled (as ADJUST applies them), then (account, amount) pairs. Applies those settlements,
 * and journals a settled write: the record enters the stream under its sequence number, and its charges move from
 * the process's own share (released if it dies) to its journal's (kept until written). A call's settlement and its
 * journal entry so cost Redis one script, not two (docs/adr/0052). 0 when the entry was journaled already; -1 when
 * reaped (nothing applied).
 */
const JOURNAL = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local p, n = ARGV[3], tonumber(ARGV[4])
for i = 5, 4 + 2 * n, 2 do
  local out = p .. 'out:' .. ARGV[i]
  if redis.call('INCRBY', out, ARGV[i + 1]) == 0 then redis.call('DEL', out) end
  if redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1]) == 0 then redis.call('HDEL', KEYS[2], ARGV[i]) end
end
local added = redis.pcall('XADD', KEYS[4], ARGV[1] .. '-0', 'r', ARGV[2])
if type(added) == 'table' and added.err then return 0 end
for i = 5 + 2 * n, #ARGV, 2 do
  if redis.call('HINCRBY', KEYS[2], ARGV[i], '-' .. ARGV[i + 1]) == 0 then redis.call('HDEL', KEYS[2], ARGV[i]) end
  redis.call('HINCRBY', KEYS[3], ARGV[i], ARGV[i + 1])
end
return 1`;

/**
 * KEYS: base and out per account. ARGV: key prefix, then five per window: name prefix, slot, step, slots, limit.
 * What each account, then each window, can spend now: pairs (1, available), or (0, 0) unknown.
 */
const VIEW = `${WINDOW_FUNCTIONS}
local answer = {}
local n = #KEYS / 2
for i = 1, n do
  local b = redis.call('HGET', KEYS[2 * i - 1], 'b')
  if b then
    answer[2 * i - 1] = 1
    answer[2 * i] = tonumber(b) - tonumber(redis.call('GET', KEYS[2 * i]) or '0')
  else
    answer[2 * i - 1] = 0
    answer[2 * i] = 0
  end
end
for j = 1, (#ARGV - 1) / 5 do
  local o = 1 + 5 * (j - 1)
  local left = windowLeft(ARGV[1], ARGV[o + 1], tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4]),
    tonumber(ARGV[o + 5]), true, nil)
  answer[2 * (n + j) - 1] = left and 1 or 0
  answer[2 * (n + j)] = left or 0
end
return answer`;

/** KEYS: an orphan's lock. ARGV: the claimer. Frees the lock if the claimer still holds it. */
const UNLOCK_ORPHAN = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`;

/** KEYS: orphans. ARGV: key prefix, claimer, lock ms. An orphaned journal nobody is writing, or false. */
const CLAIM_ORPHAN = `
local p = ARGV[1]
for _, pid in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('XLEN', p .. 'journal:' .. pid) == 0 and redis.call('EXISTS', p .. 'jrn:' .. pid) == 0 then
    redis.call('SREM', KEYS[1], pid)
  elseif redis.call('SET', p .. 'orphanlock:' .. pid, ARGV[2], 'NX', 'PX', ARGV[3]) then
    return pid
  end
end
return false`;

/**
 * KEYS: orphans. ARGV: key prefix, orphan id, ttl ms, then (account, version) pairs read from the database after
 * the orphan's entries were written. Its charges leave the outstanding amounts and the bases are read again (no
 * earlier read may land: the versions go up). 0 while entries remain.
 */
const ORPHAN_WRITTEN = `${REAP_FUNCTION}
local p, pid = ARGV[1], ARGV[2]
local jrn, stream = p .. 'jrn:' .. pid, p .. 'journal:' .. pid
if redis.call('XLEN', stream) > 0 then return 0 end
release(p, jrn, true)
for i = 4, #ARGV, 2 do
  local ver = p .. 'ver:' .. ARGV[i]
  if tonumber(ARGV[i + 1]) > tonumber(redis.call('GET', ver) or '0') then
    redis.call('SET', ver, ARGV[i + 1], 'PX', ARGV[3])
  end
end
redis.call('DEL', jrn, stream, p .. 'orphanlock:' .. pid)
redis.call('SREM', KEYS[1], pid)
return 1`;

/**
 * KEYS: procs. ARGV: key prefix, new id, lease ms, old id ('' for none), n, then n pairs (account, amount owed),
 * then accounts whose base must be read again. Returns the number of live processes.
 */
const REGISTER = `${REAP_FUNCTION}
local p = ARGV[1]
if ARGV[4] ~= '' then reap(p, KEYS[1], ARGV[4], false) end
local pid = ARGV[2]
redis.call('SET', p .. 'lease:' .. pid, '1', 'PX', ARGV[3])
redis.call('SADD', KEYS[1], pid)
local n = tonumber(ARGV[5])
for i = 0, n - 1 do
  local name, amount = ARGV[6 + 2 * i], ARGV[7 + 2 * i]
  redis.call('INCRBY', p .. 'out:' .. name, amount)
  redis.call('HSET', p .. 'proc:' .. pid, name, amount)
end
for i = 6 + 2 * n, #ARGV do redis.call('DEL', p .. 'base:' .. ARGV[i]) end
return redis.call('SCARD', KEYS[1])`;

/**
 * KEYS: lease. ARGV: key prefix, own id, n, then n pairs (account, change), then accounts whose base must be read
 * again. What this process came to owe while its registration was on the way; -1 when it was reaped meanwhile.
 */
const ADJUST = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local p = ARGV[1]
local proc = p .. 'proc:' .. ARGV[2]
local n = tonumber(ARGV[3])
for i = 0, n - 1 do
  local name, change = ARGV[4 + 2 * i], ARGV[5 + 2 * i]
  local out = p .. 'out:' .. name
  if redis.call('INCRBY', out, change) == 0 then redis.call('DEL', out) end
  if redis.call('HINCRBY', proc, name, change) == 0 then redis.call('HDEL', proc, name) end
end
for i = 4 + 2 * n, #ARGV do redis.call('DEL', p .. 'base:' .. ARGV[i]) end
return 1`;

/** KEYS: procs. ARGV: key prefix, own id, lease ms. Renews the own lease, reaps the dead; -1 when reaped itself. */
const RENEW = `${REAP_FUNCTION}
local p = ARGV[1]
local alive = redis.call('SET', p .. 'lease:' .. ARGV[2], '1', 'PX', ARGV[3], 'XX')
for _, pid in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', p .. 'lease:' .. pid) == 0 then reap(p, KEYS[1], pid, true) end
end
if not alive then return -1 end
return redis.call('SCARD', KEYS[1])`;

/**
 * KEYS: procs. ARGV: key prefix, own id. Leaves: its holds are given back, and a journal it could not write (the
 * database was away) is left for another process.
 */
const RELEASE = `${REAP_FUNCTION}
reap(ARGV[1], KEYS[1], ARGV[2], true)
return 1`;

type Script = (...args: (string | number)[]) => Promise<unknown>;

/** The ledger's command that journals a settled write (connectLedgerRedis sends it at once, never pipelined later). */
export const LEDGER_JOURNAL_COMMAND = 'turnpikeLedgerJournal';

/** No quota window: the hold of most calls. */
const NO_WINDOWS: readonly WindowClaim[] = Object.freeze([]);

/** How long an account's view is kept fresh after it was last held here. */
const VIEW_KEPT_MS = 60_000;

/** The database could not be read for a base: not a Redis failure, so the ledger does not degrade for it. */
class BasesUnreadable extends Error {
  constructor(cause: unknown) {
    super('the balances could not be read from the database', { cause });
  }
}

export interface RedisLedgerOptions {
  /** A connection of the ledger's own that fails fast while Redis is away (no offline queue, a command timeout). */
  readonly redis: Redis;
  readonly keyPrefix: string;
  readonly loadBases: BaseLoader;
  readonly leaseMs?: number;
  readonly renewMs?: number;
  /** How often an unreachable Redis is tried again (registering anew), so admission is shared again within it. */
  readonly retryMs?: number;
  /** How long bases and reported versions are kept without use. */
  readonly baseTtlMs?: number;
  readonly onError?: (error: unknown) => void;
  /** Told when the ledger enters or leaves its degraded mode. */
  readonly onDegraded?: (degraded: boolean) => void;
}

export interface RedisLedger extends Ledger {
  /** Registers this process; resolves even when Redis is away (the ledger then starts degraded). */
  start(): Promise<void>;
  /** The number of live relay processes, as last seen. */
  liveProcesses(): number;
}

export function createRedisLedger(options: RedisLedgerOptions): RedisLedger {
  const { redis, loadBases } = options;
  const tag = `${options.keyPrefix}{ledger}:`;
  const procsKey = `${tag}procs`;
  const leaseMs = options.leaseMs ?? 10_000;
  const renewMs = options.renewMs ?? 2_000;
  const retryMs = options.retryMs ?? 250;
  const baseTtlMs = options.baseTtlMs ?? 86_400_000;
  const onError = options.onError ?? (() => {});
  const script = (name: string, lua: string): Script => {
    const command = `turnpikeLedger${name}`;
    if (!(command in redis)) redis.defineCommand(command, { lua });
    const fn = (redis as unknown as Record<string, Script>)[command] as Script;
    return (...args) => fn.apply(redis, args);
  };
  const holdScript = script('Hold', HOLD);
  const initScript = script('Init', INIT);
  const settleScript = script('Settle', SETTLE);
  const writtenScript = script('Written', WRITTEN);
  const registerScript = script('Register', REGISTER);
  const renewScript = script('Renew', RENEW);
  const releaseScript = script('Release', RELEASE);
  const adjustScript = script('Adjust', ADJUST);
  // LEDGER_JOURNAL_COMMAND, which the ledger's connection never holds back for a pipeline
  const journalScript = script('Journal', JOURNAL);
  const claimOrphanScript = script('ClaimOrphan', CLAIM_ORPHAN);
  const orphanWrittenScript = script('OrphanWritten', ORPHAN_WRITTEN);
  const orphansKey = `${tag}orphans`;
  const viewScript = script('View', VIEW);
  const unlockOrphanScript = script('UnlockOrphan', UNLOCK_ORPHAN);
  let unwritten: () => readonly JournalEntry[] = () => [];

  const newId = () => randomBytes(8).toString('hex');
  let pid = newId();
  let registered = false;
  let everRegistered = false;
  let degraded = true;
  let relays = 1;
  let closed = false;
  let registering: Promise<void> | undefined;
  /** Everything this process owes: its holds and its charges the writer has not reported written. */
  const localOut = new Map<Account, number>();
  /**
   * What each account could spend, as the last script answer said; refreshed with every lease renewal for the
   * accounts held in the last `VIEW_KEPT_MS`, so the view a degraded admission starts from is at most one renewal
   * old (docs/adr/0022).
   */
  const lastAvailable = new Map<Account, number>();
  /** When reading a base from the database last failed (a hold then serves from a stale base). */
  let baseReadFailedAt = 0;
  /** When each account was last held here. */
  const lastHeld = new Map<Account, number>();
  /** The windows last held here, by the slot they were held on, and when: their views are kept fresh too. */
  const heldWindows = new Map<WindowAccount, { readonly claim: WindowClaim; at: number }>();
  /** Admitted per account while degraded, against the degraded allowance. */
  const degradedUsed = new Map<Account, number>();
  /** Accounts whose written report may not have reached Redis: their bases are read again on re-registering. */
  const dirty = new Set<Account>();

  const bump = (map: Map<Account, number>, account: Account, amount: number) => {
    const next = (map.get(account) ?? 0) + amount;
    if (next === 0) map.delete(account);
    else map.set(account, next);
  };
  const keysOf = (accounts: readonly Account[]) => {
    const keys: string[] = [`${tag}lease:${pid}`, `${tag}proc:${pid}`];
    for (const account of accounts) keys.push(`${tag}base:${account}`, `${tag}out:${account}`);
    return keys;
  };

  const journalKeys = () => [
    `${tag}lease:${pid}`,
    `${tag}proc:${pid}`,
    `${tag}jrn:${pid}`,
    `${tag}journal:${pid}`,
  ];

  /**
   * Settlements whose charge was known when they were made (a bill within its hold: nearly every call), as (name,
   * change) pairs for this process's id `settledPid`: they go to Redis with the next journal entry (the call's own,
   * settled just before it), or on their own at the next turn of the event loop when no entry comes.
   */
  let settledWaiting: (string | number)[] = [];
  let settledPid = pid;
  let settledScheduled = false;

  /** The settlements waiting under the current id (those of an earlier id went with its registration). */
  function takeSettled(): (string | number)[] {
    const taken = settledPid === pid ? settledWaiting : [];
    settledWaiting = [];
    return taken;
  }

  function sendSettledAlone(): void {
    const changes = takeSettled();
    if (changes.length === 0) return;
    adjustScript(1, `${tag}lease:${pid}`, tag, pid, changes.length / 2, ...changes)
      .then(registerIfReaped)
      .catch(fail);
  }

  function queueSettled(changes: readonly (string | number)[]): void {
    if (changes.length === 0) return;
    if (settledPid !== pid) settledWaiting = [];
    settledPid = pid;
    settledWaiting.push(...changes);
    if (!settledScheduled) {
      settledScheduled = true;
      setImmediate(() => {
        settledScheduled = false;
        sendSettledAlone();
      });
    }
  }

  /**
   * Sends one entry to this process's journal, with the settlements waiting; the answer only matters when the
   * process was reaped.
   */
  function sendJournal(entry: JournalEntry, settled: readonly (string | number)[] = []): void {
    const args: (string | number)[] = [entry.seq, entry.payload, tag, settled.length / 2, ...settled];
    for (const [account, amount] of entry.charges) if (amount > 0) args.push(account, amount);
    journalScript(4, ...journalKeys(), ...args)
      .then(registerIfReaped)
      .catch(fail);
  }

  /** A script's answer -1: this process was reaped (its lease ran out), so it registers again with what it owes. */
  function registerIfReaped(answer: unknown): Promise<void> | undefined {
    if (Number(answer) !== -1 || !registered) return undefined;
    registered = false;
    return register();
  }

  function setDegraded(value: boolean): void {
    if (degraded === value) return;
    degraded = value;
    if (!value) {
      // What was admitted on this process's own view is in Redis's books now (the registration sent it), not yet
      // in the view Redis last gave: the view loses it, or a second outage before Redis answers a hold for the
      // account would admit the same balance again.
      for (const [account, used] of degradedUsed) {
        const known = lastAvailable.get(account);
        if (known !== undefined) lastAvailable.set(account, known - used);
      }
      degradedUsed.clear();
    }
    options.onDegraded?.(value);
  }

  function fail(error: unknown): void {
    if (closed) return;
    if (!degraded) onError(error);
    registered = false;
    setDegraded(true);
  }

  /** Registers under a new id with everything owed, reaping the previous id; one at a time. */
  function register(): Promise<void> {
    registering ??= (async () => {
      const old = pid;
      pid = newId();
      const owed = [...localOut.entries()].filter(([, amount]) => amount !== 0);
      const reread = [...dirty];
      const args: (string | number)[] = [1, procsKey, tag, pid, leaseMs, old, owed.length];
      for (const [account, amount] of owed) args.push(account, amount);
      args.push(...reread);
      try {
        relays = Math.max(1, Number(await registerScript(...args)));
        for (const account of reread) dirty.delete(account);
        // What changed here while the registration travelled (degraded holds, settlements, written debits) is
        // sent now, before anything else this process sends, so Redis owes exactly what this process does.
        const sent = new Map(owed);
        const changes: (string | number)[] = [];
        for (const account of new Set([...sent.keys(), ...localOut.keys()])) {
          const change = (localOut.get(account) ?? 0) - (sent.get(account) ?? 0);
          if (change !== 0) changes.push(account, change);
        }
        const stale = [...dirty];
        dirty.clear();
        if (changes.length > 0 || stale.length > 0)
          adjustScript(1, `${tag}lease:${pid}`, tag, pid, changes.length / 2, ...changes, ...stale)
            .then((answer) => {
              if (Number(answer) === -1) {
                registered = false;
                return register();
              }
              return undefined;
            })
            .catch((error: unknown) => {
              for (const account of stale) dirty.add(account);
              fail(error);
            });
        // The settled writes not in the database yet go to the new id's journal, in order and before any new one
        // (this tick, on this connection): a journal the old id left was dropped by the registration.
        for (const entry of unwritten()) sendJournal(entry);
        registered = true;
        everRegistered = true;
        setDegraded(false);
      } catch (error) {
        fail(error);
      }
    })().finally(() => {
      registering = undefined;
    });
    return registering;
  }

  /**
   * Reads these accounts' bases into Redis (one query per kind, one script); the first account without a row, if
   * any (a window's slot always has a base). An account whose reads keep losing to reported debits counts as
   * absent after five tries.
   */
  async function initBases(accounts: readonly Account[]): Promise<Account | undefined> {
    let pending = [...new Set(accounts)];
    for (let attempt = 0; attempt < 5 && pending.length > 0; attempt += 1) {
      const found = await loadBases(pending).catch((error: unknown) => {
        throw new BasesUnreadable(error);
      });
      const absent = pending.find((account) => !found.has(account));
      if (absent !== undefined) return absent;
      const keys: string[] = [];
      const args: (string | number)[] = [baseTtlMs];
      for (const account of pending) {
        const base = found.get(account) as { balance: number; version: number };
        keys.push(`${tag}base:${account}`, `${tag}ver:${account}`);
        args.push(base.balance, base.version);
      }
      const answer = (await initScript(keys.length, ...keys, ...args)) as number[];
      pending = pending.filter((_, i) => Number(answer[i]) !== 1);
    }
    return pending[0];
  }

  /** A window's share while degraded starts from what Redis last said, else from the database less what is owed here. */
  async function knownWindow(claim: WindowClaim): Promise<number | undefined> {
    const account = heldOn(claim);
    let known = lastAvailable.get(account);
    if (known === undefined && everRegistered) {
      const counted = countedAccounts(claim);
      const found = await loadBases(counted).catch(() => undefined);
      if (found) {
        known = claim.limit;
        for (const slot of counted) known += (found.get(slot)?.balance ?? 0) - (localOut.get(slot) ?? 0);
        lastAvailable.set(account, known);
      }
    }
    return known;
  }

  /**
   * Admission on this process's own view while Redis is unreachable: each account may take at most its share of
   * what Redis last said it could spend, split across the live relays (`available / relays`), so the relays
   * together admit at most that (docs/adr/0022); a quota window likewise, by what was left of it. A process that
   * never reached Redis knows neither the other relays' holds nor their number: it admits nothing on its own and
   * says the gateway is degraded.
   */
  async function holdDegraded(
    accounts: readonly Account[],
    amount: number,
    windows: readonly WindowClaim[],
  ): Promise<HoldResult> {
    const share = (known: number | undefined) =>
      known === undefined ? 0 : Math.floor(known / Math.max(1, relays));
    for (const account of accounts) {
      let known = lastAvailable.get(account);
      if (known === undefined && everRegistered) {
        const base = (await loadBases([account]).catch(() => undefined))?.get(account);
        if (base) {
          known = base.balance - (localOut.get(account) ?? 0);
          lastAvailable.set(account, known);
        }
      }
      const left = share(known) - (degradedUsed.get(account) ?? 0);
      if (left < amount || left <= 0)
        return { ok: false, account, available: Math.max(left, 0), degraded: true };
    }
    for (const claim of windows) {
      const account = heldOn(claim);
      const left = share(await knownWindow(claim)) - (degradedUsed.get(account) ?? 0);
      const need = windowAmount(claim, amount);
      if (left < need || left <= 0)
        return { ok: false, account, available: Math.max(left, 0), degraded: true };
    }
    for (const account of accounts) {
      bump(degradedUsed, account, amount);
      bump(localOut, account, amount);
    }
    for (const claim of windows) {
      bump(degradedUsed, heldOn(claim), windowAmount(claim, amount));
      bump(localOut, heldOn(claim), windowAmount(claim, amount));
    }
    return { ok: true, hold: newHold(accounts, amount, windows, true) };
  }

  /** Reads again what the recently held accounts and windows can spend; forgets the views of those idle for long. */
  async function refreshViews(): Promise<void> {
    const since = Date.now() - VIEW_KEPT_MS;
    const recent: Account[] = [];
    for (const [account, at] of lastHeld) {
      if (at >= since) recent.push(account);
      else {
        lastHeld.delete(account);
        lastAvailable.delete(account);
      }
    }
    const windows: WindowClaim[] = [];
    for (const [account, held] of heldWindows) {
      if (held.at >= since) windows.push(held.claim);
      else {
        heldWindows.delete(account);
        lastAvailable.delete(account);
      }
    }
    for (let i = 0; i < Math.max(recent.length, windows.length); i += 500) {
      const chunk = recent.slice(i, i + 500);
      const claims = windows.slice(i, i + 500);
      const keys = chunk.flatMap((account) => [`${tag}base:${account}`, `${tag}out:${account}`]);
      const answer = (await viewScript(keys.length, ...keys, tag, ...windowArgs(claims))) as number[];
      chunk.forEach((account, j) => {
        if (answer[2 * j] === 1) lastAvailable.set(account, answer[2 * j + 1] as number);
      });
      claims.forEach((claim, j) => {
        const at = 2 * (chunk.length + j);
        if (answer[at] === 1) lastAvailable.set(heldOn(claim), answer[at + 1] as number);
      });
    }
  }

  /** The first five of a window's arguments to the scripts: its slots' name prefix, slot, step, slots, limit. */
  const windowArgs = (claims: readonly WindowClaim[], ...more: ((claim: WindowClaim) => string | number)[]) =>
    claims.flatMap((claim) => [
      `w:${claim.key}@`,
      claim.slot,
      claim.step,
      claim.slots,
      claim.limit,
      ...more.map((extra) => extra(claim)),
    ]);

  /** A refusal as the hold script answered it: `[0, balance index, its left, window index, its left, frees at]`. */
  function refusalOf(
    answer: readonly number[],
    accounts: readonly Account[],
    windows: readonly WindowClaim[],
  ): HoldResult {
    const [, balance = 0, balanceLeft = 0, window = 0, windowLeft = 0, freeAt = 0] = answer.map(Number);
    let refusal: WindowRefusal | undefined;
    if (window > 0) {
      const claim = windows[window - 1] as WindowClaim;
      lastAvailable.set(heldOn(claim), windowLeft);
      refusal = { claim, available: Math.max(windowLeft, 0), ...(freeAt > 0 ? { freeAt } : {}) };
    }
    if (balance > 0) {
      const account = accounts[balance - 1] as Account;
      lastAvailable.set(account, balanceLeft);
      return {
        ok: false,
        account,
        available: Math.max(balanceLeft, 0),
        ...(refusal ? { window: refusal } : {}),
      };
    }
    const claim = (refusal as WindowRefusal).claim;
    return {
      ok: false,
      account: heldOn(claim),
      available: (refusal as WindowRefusal).available,
      window: refusal,
    };
  }

  async function holdShared(
    accounts: readonly Account[],
    amount: number,
    windows: readonly WindowClaim[],
  ): Promise<HoldResult | undefined> {
    let acceptStale = false;
    const extra = windows.length === 0 ? [] : windowArgs(windows, (claim) => windowAmount(claim, amount));
    for (let attempt = 0; attempt < 4; attempt += 1) {
      const answer = (await holdScript(
        2 + 2 * accounts.length,
        ...keysOf(accounts),
        amount,
        acceptStale ? '1' : '0',
        tag,
        ...accounts,
        ...extra,
      )) as (number | string)[];
      const code = Number(answer[0]);
      if (code === 1) {
        accounts.forEach((account, i) => {
          bump(localOut, account, amount);
          lastAvailable.set(account, Number(answer[1 + i]));
        });
        windows.forEach((claim, j) => {
          bump(localOut, heldOn(claim), windowAmount(claim, amount));
          lastAvailable.set(heldOn(claim), Number(answer[1 + accounts.length + j]));
        });
        return { ok: true, hold: newHold(accounts, amount, windows, false) };
      }
      if (code === 0) return refusalOf(answer as number[], accounts, windows);
      if (code === -2) {
        const missing = answer.slice(1) as Account[];
        // The database cannot be read (it failed a moment ago: requests do not all wait on it again): a base
        // marked stale still serves; without any, the caller is refused as degraded.
        if (Date.now() - baseReadFailedAt < 250) {
          if (acceptStale) throw new BasesUnreadable(undefined);
          acceptStale = true;
          continue;
        }
        try {
          const absent = await initBases(missing);
          if (absent !== undefined) return { ok: false, account: absent, available: 0 };
        } catch (error) {
          if (!(error instanceof BasesUnreadable)) throw error;
          baseReadFailedAt = Date.now();
          if (acceptStale) throw error;
          acceptStale = true;
        }
      } else {
        await register();
        if (degraded) return undefined;
      }
    }
    return { ok: false, account: accounts[0] as Account, available: 0 };
  }

  let lastRenewal = Date.now();
  const timer = setInterval(
    () => {
      if (closed) return;
      if (!registered) {
        void register();
        return;
      }
      if (Date.now() - lastRenewal < renewMs) return;
      lastRenewal = Date.now();
      renewScript(1, procsKey, tag, pid, leaseMs)
        .then((answer) => {
          if (Number(answer) === -1) {
            registered = false;
            return register();
          }
          relays = Math.max(1, Number(answer));
          return refreshViews();
        })
        .catch(fail);
    },
    Math.min(renewMs, retryMs),
  );
  timer.unref();

  return {
    async start() {
      await register();
    },
    async hold(accounts, amount, windows = NO_WINDOWS) {
      const now = Date.now();
      for (const account of accounts) lastHeld.set(account, now);
      for (const claim of windows) heldWindows.set(heldOn(claim), { claim, at: now });
      if (!degraded) {
        // Settlements still waiting for a journal entry go first (one write, in order): a hold sees what they freed.
        if (settledWaiting.length > 0) sendSettledAlone();
        try {
          const shared = await holdShared(accounts, amount, windows);
          if (shared) return shared;
        } catch (error) {
          // The database is away and Redis has no base for the account: refused as degraded; Redis is fine.
          if (error instanceof BasesUnreadable)
            return { ok: false, account: accounts[0] as Account, available: 0, degraded: true };
          fail(error);
        }
      }
      return holdDegraded(accounts, amount, windows);
    },
    async settle(hold: Hold, bill: number, counted = bill > 0): Promise<SettleResult> {
      if (hold.settled) return { charged: 0, shortfall: 0 };
      hold.settled = true;
      const windows = hold.windows ?? NO_WINDOWS;
      /** This process's books: the balances' and windows' shares move from the hold to the charge. */
      const book = (charged: number): SettleResult => {
        const result = { charged, shortfall: bill - charged };
        for (const account of hold.accounts) {
          bump(localOut, account, charged - hold.amount);
          if (hold.degraded) bump(degradedUsed, account, charged - hold.amount);
        }
        if (windows.length === 0) return result;
        const charges = windowChargesOf(windows, charged, counted);
        const charge = new Map(charges);
        for (const claim of windows) {
          const account = heldOn(claim);
          const change = (charge.get(account) ?? 0) - windowAmount(claim, hold.amount);
          bump(localOut, account, change);
          if (hold.degraded) bump(degradedUsed, account, change);
        }
        return { ...result, windows: charges };
      };
      const local = () => book(chargeOf(hold.amount, bill, hold.amount).charged);
      // A hold admitted while degraded was registered with everything this process owes when Redis came back,
      // so once Redis is back it settles there like any other. While a registration travels, what is settled
      // meanwhile goes with the adjustment that follows it.
      if (degraded || registering) return local();
      if (bill <= hold.amount) {
        // The charge is known: this process's books change now, Redis's with the call's journal entry (one script).
        const result = local();
        const changes: (string | number)[] = [];
        if (result.charged !== hold.amount)
          for (const account of hold.accounts) changes.push(account, result.charged - hold.amount);
        if (result.windows) {
          const charge = new Map(result.windows);
          for (const claim of windows) {
            const change = (charge.get(heldOn(claim)) ?? 0) - windowAmount(claim, hold.amount);
            if (change !== 0) changes.push(heldOn(claim), change);
          }
        }
        queueSettled(changes);
        return result;
      }
      const keys = keysOf(hold.accounts);
      const call = settleScript(
        keys.length,
        ...keys,
        hold.amount,
        bill,
        tag,
        ...hold.accounts,
        ...(windows.length === 0
          ? []
          : windowArgs(
              windows,
              (claim) => windowAmount(claim, hold.amount),
              (claim) => (claim.unit === 'quota' ? 'q' : counted ? 1 : 0),
            )),
      );
      try {
        const [code, charged] = (await call) as [number, number];
        if (code === 1) return book(charged);
        registered = false;
        void register();
      } catch (error) {
        fail(error);
      }
      return local();
    },
    written(debits: readonly WrittenDebit[], journaledUpTo?: number) {
      for (const { account, amount } of debits) bump(localOut, account, -amount);
      if (debits.length === 0 && journaledUpTo === undefined) return;
      if (degraded || !registered) {
        for (const { account } of debits) dirty.add(account);
        return;
      }
      const keys = journalKeys();
      const args: (string | number)[] = [journaledUpTo ?? '', baseTtlMs];
      for (const { account, amount, version, reread } of debits) {
        keys.push(`${tag}base:${account}`, `${tag}out:${account}`, `${tag}ver:${account}`);
        args.push(account, amount, version, reread ? '1' : '0');
      }
      writtenScript(keys.length, ...keys, ...args)
        .then((answer) => {
          if (Number(answer) === -1) {
            for (const { account } of debits) dirty.add(account);
            registered = false;
            return register();
          }
          return undefined;
        })
        .catch((error: unknown) => {
          for (const { account } of debits) dirty.add(account);
          fail(error);
        });
    },
    journal(entry) {
      if (!degraded && registered) sendJournal(entry, takeSettled());
    },
    attachJournal(source) {
      unwritten = source;
    },
    async drainOrphans(write: OrphanWriter) {
      if (degraded || !registered) return 0;
      const orphan = (await claimOrphanScript(1, orphansKey, tag, pid, leaseMs * 6)) as string | null;
      if (!orphan) return 0;
      const stream = `${tag}journal:${orphan}`;
      let count = 0;
      try {
        for (;;) {
          const entries = await redis.xrange(stream, '-', '+', 'COUNT', 1000);
          if (entries.length === 0) break;
          await write(entries.map(([, fields]) => fields[1] as string));
          const last = entries[entries.length - 1]?.[0] as string;
          await redis.xtrim(stream, 'MINID', `${last.split('-')[0]}-1`);
          count += entries.length;
        }
      } catch (error) {
        // The database is away (say): the orphan is free for the next try at once, not when the lock runs out.
        await unlockOrphanScript(1, `${tag}orphanlock:${orphan}`, pid).catch(() => undefined);
        throw error;
      }
      const accounts = (await redis.hkeys(`${tag}jrn:${orphan}`)) as Account[];
      const bases = accounts.length > 0 ? await loadBases(accounts) : new Map();
      const versions: (string | number)[] = [];
      for (const [account, base] of bases) versions.push(account, base.version);
      await orphanWrittenScript(1, orphansKey, tag, orphan, baseTtlMs, ...versions);
      return count;
    },
    invalidate(accounts) {
      if (accounts.length === 0) return;
      for (const account of accounts) lastAvailable.delete(account);
      redis.del(...accounts.map((account) => `${tag}base:${account}`)).catch(fail);
    },
    available: (account) => lastAvailable.get(account),
    isDegraded: () => degraded,
    liveProcesses: () => relays,
    async close() {
      closed = true;
      clearInterval(timer);
      await registering;
      if (registered) await releaseScript(1, procsKey, tag, pid).catch(() => undefined);
    },
  };
}
