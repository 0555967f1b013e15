import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { checkChannelOther, splitChannelKeys, splitCommaList } from '@turnpike/core/channels/channel-rules';
import { createChannelWriter } from '@turnpike/core/channels/channel-writes';
import { ringColumns } from '@turnpike/core/channels/key-ring-writes';
import {
  appendKeys,
  CreateMode,
  enabledKeyCount,
  KeyMode,
  type KeyRing,
  KeyStatus,
  MultiKeyMode,
  newRing,
  parseChannelInfo,
  replaceKeys,
  ringOf,
  splitStoredKeys,
} from '@turnpike/core/channels/multi-key';
import { channelProxy, fetchUpstreamBalance, fetchUpstreamModels } from '@turnpike/core/channels/upstream';
import {
  CHANNEL_NAME_MAX,
  type ChannelSearchQuery,
  type ChannelTagView,
  type ChannelView,
  type CreateChannel,
  type EditTag,
  toChannelTagView,
  toChannelView,
  type UpdateChannel,
} from '@turnpike/core/contracts/channels';
import type { Page } from '@turnpike/core/contracts/envelope';
import type { Executor } from '@turnpike/core/db/client';
import type { Channel, NewChannel } from '@turnpike/core/db/schema/channels';
import { channels as channelsTable } from '@turnpike/core/db/schema/channels';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { isRoot } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import {
  addressRefusal,
  createCheckedDispatcher,
  type HostRefusal,
  outboundPolicyOf,
} from '@turnpike/core/net/guarded-fetch';
import { managedByKubernetes, sourceOfRow } from '@turnpike/core/ownership/source';
import {
  findProviderType,
  knownModelOwners,
  refusalOfKey,
  refusalOfType,
} from '@turnpike/core/providers/catalogue';
import { createAbilityRepo } from '@turnpike/core/repos/ability.repo';
import { createChannelRepo } from '@turnpike/core/repos/channel.repo';
import { nowSeconds } from '@turnpike/core/repos/log.repo';
import { isNotNull, type SQL } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';

const NOT_FOUND = 'channel not found';
/** The reference's fixed "created" stamp of catalogue entries; clients only display it. */
const CATALOGUE_CREATED = 1626777600;

export type ChannelListEntry = ChannelView | ChannelTagView;

/** Who asks for a change: addresses from a role below root are checked (docs/adr/0039). */
interface Caller {
  readonly role: number;
}

/** The schemes of a channel proxy the relay can use (`core/src/http/proxy-dispatcher.ts`). */
const PROXY_SCHEMES = ['http:', 'https:', 'socks5:', 'socks5h:'];

const ALLOW_RANGE = 'the root user can allow its range in System settings → Requests to user addresses';

/** What an administrator is told of an address refused: what to do, never which address a name resolved to. */
function internalAddressMessage(field: string, reason: HostRefusal['reason'] | 'scheme'): string {
  switch (reason) {
    case 'scheme':
      return `${field} is not an address the gateway can call`;
    case 'local_name':
      return `${field} names this server (localhost); write its address instead, and ${ALLOW_RANGE}`;
    case 'blocked_address':
      return `${field} points to a private or internal address; ${ALLOW_RANGE}`;
    default:
      // A name that does not resolve reads like one that resolves inside: neither maps the internal names.
      return `${field} does not resolve to a public address (it points to a private or internal address, or does not resolve); ${ALLOW_RANGE}`;
  }
}

/**
 * Admin management of channels. Every write goes through core's channel writer (rows and abilities in one
 * transaction, then `channels.changed`). Rows a Kubernetes resource owns are refused, naming the resource
 * (docs/adr/0017); runtime fields (balance, test results) still change.
 */
export function createChannelService(deps: AppDeps) {
  const box = createChannelKeyBox(deps.config.cryptoSecret);
  const repo = createChannelRepo(deps.db);
  const abilityRepo = createAbilityRepo(deps.db);
  const writer = createChannelWriter({ db: deps.db, bus: deps.bus, box });
  const policy = () => outboundPolicyOf((key) => deps.options.get(key));

  /**
   * An address a role below root saves, or has the server call, must not reach the gateway's own network unless
   * root allows its range (docs/adr/0039). Root's addresses are root's network: not checked. Blank: the type's
   * default, which the catalogue chose.
   */
  async function refuseInternal(
    caller: Caller,
    field: string,
    url: string | undefined,
    protocols?: readonly string[],
  ): Promise<void> {
    if (isRoot(caller.role) || !url) return;
    const refusal = await addressRefusal(url, policy(), { resolve: deps.resolveHost, protocols });
    if (refusal) throw new AppError('VALIDATION_FAILED', internalAddressMessage(field, refusal.reason));
  }

  /** The base URL and proxy of a save, each checked when it differs from what the channel had. */
  async function refuseInternalAddresses(
    caller: Caller,
    sent: { baseUrl?: string | undefined; setting?: string | null | undefined },
    before?: Channel,
  ): Promise<void> {
    if (sent.baseUrl !== undefined && sent.baseUrl !== before?.baseUrl)
      await refuseInternal(caller, 'base_url', sent.baseUrl);
    if (sent.setting === undefined) return;
    const proxy = channelProxy(sent.setting);
    if (proxy !== channelProxy(before?.setting))
      await refuseInternal(caller, 'setting.proxy', proxy, PROXY_SCHEMES);
  }

  async function write(run: (tx: Executor) => Promise<Channel[]>): Promise<Channel[]> {
    return (await writer.write(run)).rows;
  }

  async function remove(select: (tx: Executor) => Promise<number[]>): Promise<number[]> {
    return (await writer.remove(select)).ids;
  }

  /** Refuses when any of these rows belongs to a Kubernetes resource. */
  function refuseManaged(rows: readonly Channel[]): void {
    for (const row of rows) {
      const source = sourceOfRow(row);
      if (source) throw managedByKubernetes(`channel #${row.id} (${row.name})`, source);
    }
  }

  function openKey(channel: Channel): string {
    const key = box.open(channel.key);
    if (key === undefined)
      throw new AppError('CONFLICT', 'the stored key of this channel cannot be read; enter the key again');
    return key;
  }

  /** The key an upstream look-up (models, balance) uses: the first enabled key of a multi-key channel. */
  function lookupKey(channel: Channel): string {
    const ring = ringOf(channel.type, openKey(channel), parseChannelInfo(channel.channelInfo));
    const index = ring.states.findIndex((state) => state.status === KeyStatus.Enabled);
    const key = ring.keys[Math.max(index, 0)];
    if (key === undefined) throw new AppError('CONFLICT', 'this channel holds no key');
    return key;
  }

  async function mustFind(id: number): Promise<Channel> {
    const channel = await repo.find(id);
    if (!channel) throw new AppError('NOT_FOUND', NOT_FOUND);
    return channel;
  }

  /** A new channel (or a channel moved to another type) of a type the relay cannot serve is refused, with why. */
  function refuseUnserved(type: number): void {
    const reason = refusalOfType(type);
    if (reason) throw new AppError('VALIDATION_FAILED', `channel type ${type} is refused: ${reason}`);
  }

  /** A key whose shape cannot work for its type (Spark's WebSocket triple) is refused, with what to enter instead. */
  function refuseKeys(type: number, keys: readonly string[]): void {
    for (const key of keys) {
      const reason = refusalOfKey(type, key);
      if (reason) throw new AppError('VALIDATION_FAILED', reason);
    }
  }

  function checkOther(type: number, other: string): void {
    const problem = checkChannelOther(type, other);
    if (problem) throw new AppError('VALIDATION_FAILED', problem);
  }

  /** Form fields → columns; only fields that were sent. */
  function toColumns(input: Omit<UpdateChannel, 'id'>): Partial<NewChannel> {
    const patch: Partial<NewChannel> = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.type !== undefined) patch.type = input.type;
    if (input.base_url !== undefined) patch.baseUrl = input.base_url;
    if (input.other !== undefined) patch.other = input.other;
    if (input.openai_organization !== undefined) patch.openaiOrganization = input.openai_organization || null;
    if (input.test_model !== undefined) patch.testModel = input.test_model || null;
    if (input.models !== undefined) patch.models = input.models;
    if (input.group !== undefined) patch.group = input.group || 'default';
    if (input.auto_ban !== undefined) patch.autoBan = input.auto_ban;
    if (input.priority !== undefined) patch.priority = input.priority;
    if (input.weight !== undefined) patch.weight = input.weight;
    if (input.max_input_tokens !== undefined) patch.maxInputTokens = input.max_input_tokens;
    if (input.rpm_limit !== undefined) patch.rpmLimit = input.rpm_limit;
    if (input.tpm_limit !== undefined) patch.tpmLimit = input.tpm_limit;
    if (input.concurrency_limit !== undefined) patch.concurrencyLimit = input.concurrency_limit;
    if (input.tag !== undefined) patch.tag = input.tag || null;
    if (input.status !== undefined) patch.status = input.status;
    if (input.model_mapping !== undefined) patch.modelMapping = input.model_mapping || null;
    if (input.status_code_mapping !== undefined) patch.statusCodeMapping = input.status_code_mapping || null;
    if (input.setting !== undefined) patch.setting = input.setting || null;
    if (input.param_override !== undefined) patch.paramOverride = input.param_override || null;
    if (input.other_info !== undefined) patch.otherInfo = input.other_info || null;
    return patch;
  }

  /** Whether `text` is the key of a channel, or one of the keys of a multi-key channel. */
  function isKeyOf(channel: Channel, text: string): boolean {
    const opened = box.open(channel.key);
    if (opened === undefined) return false;
    return splitStoredKeys(channel.type, opened, parseChannelInfo(channel.channelInfo).is_multi_key).includes(
      text,
    );
  }

  function paginate<T>(entries: T[], page: number, size: number): Page<T> {
    return {
      items: entries.slice((page - 1) * size, page * size),
      total: entries.length,
      page,
      page_size: size,
    };
  }

  /** Tag mode: a tagged channel joins its tag's row (placed where its first channel is); untagged ones stand alone. */
  function groupByTag(rows: Channel[]): ChannelListEntry[] {
    const entries: (ChannelView | { tag: string; children: ChannelView[] })[] = [];
    const byTag = new Map<string, ChannelView[]>();
    for (const row of rows) {
      const view = toChannelView(row);
      if (!row.tag) {
        entries.push(view);
        continue;
      }
      let children = byTag.get(row.tag);
      if (!children) {
        children = [];
        byTag.set(row.tag, children);
        entries.push({ tag: row.tag, children });
      }
      children.push(view);
    }
    return entries.map((e) => ('children' in e ? toChannelTagView(e.tag, e.children) : e));
  }

  return {
    async list(query: { p: number; page_size: number; id_sort: boolean; tag_mode: boolean }) {
      if (query.tag_mode)
        return paginate(groupByTag(await repo.all(query.id_sort)), query.p, query.page_size);
      const { rows, total } = await repo.page(query.p, query.page_size, query.id_sort);
      return { items: rows.map(toChannelView), total, page: query.p, page_size: query.page_size };
    },

    /** keyword: the id, part of the name, or the exact key; group: one of the groups; model: part of a model name. */
    async search(query: ChannelSearchQuery): Promise<Page<ChannelListEntry>> {
      const keyword = query.keyword.toLowerCase();
      const model = query.model.toLowerCase();
      const rows = (await repo.all(query.id_sort)).filter((c) => {
        if (query.group && !splitCommaList(c.group).includes(query.group)) return false;
        if (model && !c.models.toLowerCase().includes(model)) return false;
        if (!keyword) return true;
        return (
          String(c.id) === keyword || c.name.toLowerCase().includes(keyword) || isKeyOf(c, query.keyword)
        );
      });
      if (query.tag_mode) return paginate(groupByTag(rows), query.p, query.page_size);
      return paginate(rows.map(toChannelView), query.p, query.page_size);
    },

    async get(id: number): Promise<ChannelView> {
      return toChannelView(await mustFind(id));
    },

    /**
     * `batch` (and no mode): one channel per key line (per service-account document); `multi_to_single`: one
     * multi-key channel holding them all; `single`: one channel with one key.
     */
    async create(input: CreateChannel, caller: Caller): Promise<ChannelView[]> {
      refuseUnserved(input.type);
      const keys = splitChannelKeys(input.type, input.key);
      if (keys.length === 0)
        throw new AppError('VALIDATION_FAILED', 'please fill in channel name and channel key');
      refuseKeys(input.type, keys);
      if (input.mode === CreateMode.Single && keys.length > 1)
        throw new AppError(
          'VALIDATION_FAILED',
          `mode single takes one key and ${keys.length} were sent: use batch (one channel per key) or multi_to_single (one channel holding them all)`,
        );
      const { mode, multi_key_mode: multiKeyMode, ...fields } = input;
      const base = toColumns(fields);
      const other = input.other ?? '';
      checkOther(input.type, other);
      await refuseInternalAddresses(caller, { baseUrl: input.base_url, setting: input.setting });
      const created = nowSeconds();
      const rows: NewChannel[] =
        mode === CreateMode.MultiToSingle
          ? [
              {
                ...base,
                type: input.type,
                other,
                createdTime: created,
                ...ringColumns(
                  { type: input.type, status: base.status ?? ChannelStatus.Enabled, otherInfo: null },
                  newRing(keys, multiKeyMode ?? MultiKeyMode.Random),
                  box,
                  created,
                ),
              } as NewChannel,
            ]
          : keys.map((key) => ({
              ...base,
              type: input.type,
              other,
              key: box.seal(key),
              createdTime: created,
            }));
      const inserted = await write((tx) => createChannelRepo(tx).insertMany(rows));
      return inserted.map(toChannelView);
    },

    /**
     * Full or partial edit; a blank key keeps the stored keys. On a multi-key channel the key field replaces the
     * keys (`key_mode` replace, the default: keys kept keep their state) or adds to them (`append`); `append` on a
     * single-key channel makes it a multi-key one.
     */
    async update(input: UpdateChannel, caller: Caller): Promise<ChannelView> {
      const { id, key, key_mode: keyMode, multi_key_mode: multiKeyMode, ...fields } = input;
      const current = await mustFind(id);
      refuseManaged([current]);
      const patch = toColumns(fields);
      // A row of a type the relay no longer serves may still be edited (disabled, renamed); none is moved to one.
      if (patch.type !== undefined && patch.type !== current.type) refuseUnserved(patch.type);
      const type = patch.type ?? current.type;
      const sentKeys = key !== undefined && key.trim() !== '' ? splitChannelKeys(type, key) : undefined;
      if (sentKeys) refuseKeys(type, sentKeys);
      const info = parseChannelInfo(current.channelInfo);
      let keysAfter: KeyRing | undefined = info.is_multi_key
        ? ringOf(type, openKey(current), info)
        : undefined;
      if (sentKeys || multiKeyMode !== undefined) {
        const ring = ringOf(type, openKey(current), info);
        let next: KeyRing = multiKeyMode !== undefined ? { ...ring, mode: multiKeyMode } : ring;
        if (sentKeys && keyMode === KeyMode.Append) next = appendKeys(next, sentKeys);
        else if (sentKeys && info.is_multi_key) next = replaceKeys(next, sentKeys);
        else if (sentKeys) {
          if (sentKeys.length !== 1)
            throw new AppError(
              'VALIDATION_FAILED',
              'a single-key channel takes exactly one key; send key_mode append to make it a multi-key channel',
            );
          next = replaceKeys(next, sentKeys, false);
        }
        if (next.keys.length === 0)
          throw new AppError('VALIDATION_FAILED', 'a channel needs at least one key');
        keysAfter = next;
        Object.assign(
          patch,
          ringColumns({ ...current, type, status: patch.status ?? current.status }, next, box, nowSeconds()),
        );
      }
      // A multi-key channel switched on with no key enabled could serve nothing.
      if (
        fields.status === ChannelStatus.Enabled &&
        keysAfter?.isMultiKey &&
        enabledKeyCount(keysAfter) === 0
      )
        throw new AppError(
          'VALIDATION_FAILED',
          'every key of this channel is disabled: enable a key or add one before enabling the channel',
        );
      if (patch.type !== undefined || patch.other !== undefined)
        checkOther(patch.type ?? current.type, patch.other ?? current.other);
      await refuseInternalAddresses(caller, { baseUrl: patch.baseUrl, setting: patch.setting }, current);
      const [row] = await write(async (tx) => {
        const updated = await createChannelRepo(tx).update(id, patch);
        if (!updated) throw new AppError('NOT_FOUND', NOT_FOUND);
        return [updated];
      });
      return toChannelView(row!);
    },

    /**
     * A new channel with the settings and the stored key of another, named with `suffix` appended. The copy starts
     * with no usage history: used quota, test results and (when `resetBalance`) the balance are zero.
     */
    async copy(id: number, options: { suffix: string; resetBalance: boolean }): Promise<ChannelView> {
      const found = await mustFind(id);
      const { id: _sourceId, ...source } = found;
      refuseUnserved(source.type);
      const storedKey = box.open(found.key);
      if (storedKey !== undefined) refuseKeys(source.type, [storedKey]);
      const copy: NewChannel = {
        ...source,
        // The copy is the administrator's own: Git does not know it.
        sourceKind: null,
        sourceNamespace: null,
        sourceName: null,
        sourceGeneration: null,
        sourceIndex: null,
        name: `${source.name}${options.suffix}`.slice(0, CHANNEL_NAME_MAX),
        createdTime: nowSeconds(),
        usedQuota: 0,
        responseTime: 0,
        testTime: 0,
        ...(options.resetBalance ? { balance: 0, balanceUpdatedTime: 0 } : {}),
      };
      const [row] = await write((tx) => createChannelRepo(tx).insertMany([copy]));
      return toChannelView(row!);
    },

    async delete(id: number): Promise<void> {
      refuseManaged(await repo.byIds([id]));
      const gone = await remove((tx) => createChannelRepo(tx).deleteByIds([id]));
      if (gone.length === 0) throw new AppError('NOT_FOUND', NOT_FOUND);
    },

    async deleteMany(ids: number[]): Promise<number> {
      refuseManaged(await repo.byIds(ids));
      return (await remove((tx) => createChannelRepo(tx).deleteByIds(ids))).length;
    },

    /** Channels a resource owns are left alone: the operator would only put them back. */
    async deleteDisabled(): Promise<number> {
      const managed = new Set(
        (
          await deps.db
            .select({ id: channelsTable.id })
            .from(channelsTable)
            .where(isNotNull(channelsTable.sourceKind))
        ).map((r) => r.id),
      );
      const gone = await remove(async (tx) => {
        const channelRepo = createChannelRepo(tx);
        const disabled = (await channelRepo.all()).filter(
          (c) => !managed.has(c.id) && c.status !== ChannelStatus.Enabled,
        );
        return channelRepo.deleteByIds(disabled.map((c) => c.id));
      });
      return gone.length;
    },

    async tagMany(ids: number[], tag: string): Promise<number> {
      refuseManaged(await repo.byIds(ids));
      const rows = await write((tx) => createChannelRepo(tx).updateWhere(repo.whereIds(ids), { tag }));
      return rows.length;
    },

    async setTagStatus(
      tag: string,
      status: typeof ChannelStatus.Enabled | typeof ChannelStatus.ManuallyDisabled,
    ): Promise<number> {
      refuseManaged(await repo.byTag(tag));
      const rows = await write((tx) => createChannelRepo(tx).updateWhere(repo.whereTag(tag), { status }));
      if (rows.length === 0) throw new AppError('NOT_FOUND', 'no channel has this tag');
      return rows.length;
    },

    /** Overwrites what was sent on every channel of the tag; a blank new tag removes the tag. */
    async editTag(edit: EditTag): Promise<number> {
      const patch: Partial<NewChannel> = {};
      if (edit.new_tag !== undefined) patch.tag = edit.new_tag || null;
      if (edit.model_mapping !== undefined) patch.modelMapping = edit.model_mapping || null;
      if (edit.models) patch.models = edit.models;
      if (edit.groups) patch.group = edit.groups;
      if (edit.priority !== undefined) patch.priority = edit.priority;
      if (edit.weight !== undefined) patch.weight = edit.weight;
      refuseManaged(await repo.byTag(edit.tag));
      const rows = await write((tx) =>
        createChannelRepo(tx).updateWhere(repo.whereTag(edit.tag) as SQL, patch),
      );
      if (rows.length === 0) throw new AppError('NOT_FOUND', 'no channel has this tag');
      return rows.length;
    },

    /** Rebuilds every channel's abilities and drops rows of deleted channels; answers the channels rebuilt. */
    async fixAbilities(): Promise<number> {
      const rows = await deps.db.transaction(async (tx) => {
        const all = await createChannelRepo(tx).all();
        const abilitiesTx = createAbilityRepo(tx);
        await abilitiesTx.deleteOrphans();
        await abilitiesTx.rebuild(all);
        return all;
      });
      if (rows.length > 0) await deps.bus.publish({ type: 'channels.changed', ids: rows.map((c) => c.id) });
      return rows.length;
    },

    /** The catalogue of known model names in the OpenAI list-item shape. */
    catalogueModels() {
      return knownModelOwners().map(({ model, owner }) => ({
        id: model,
        object: 'model',
        created: CATALOGUE_CREATED,
        owned_by: owner,
      }));
    },

    enabledModels: () => abilityRepo.enabledModels(),

    /**
     * The model list at an address not saved yet. A role below root has it checked first (a clear refusal), then
     * called through a dispatcher that checks again where it connects: a name cannot answer a public address to
     * the check and an internal one to the call.
     */
    async fetchModels(
      input: { type: number; baseUrl: string; key: string; other?: string },
      caller: Caller,
    ): Promise<string[]> {
      const first = splitChannelKeys(input.type, input.key)[0];
      if (!first) throw new AppError('VALIDATION_FAILED', 'please fill in the key');
      const route = { other: input.other ?? '' };
      if (isRoot(caller.role) || input.baseUrl === '')
        return fetchUpstreamModels(input.type, input.baseUrl, first, route);
      await refuseInternal(caller, 'base_url', input.baseUrl);
      const dispatcher = createCheckedDispatcher({
        policy,
        subject: 'the upstream',
        resolve: deps.resolveHost,
      });
      try {
        return await fetchUpstreamModels(input.type, input.baseUrl, first, { ...route, dispatcher });
      } finally {
        await dispatcher.destroy();
      }
    },

    async fetchModelsOf(id: number): Promise<string[]> {
      const channel = await mustFind(id);
      return fetchUpstreamModels(channel.type, channel.baseUrl, lookupKey(channel), {
        proxy: channelProxy(channel.setting),
        other: channel.other,
      });
    },

    async updateBalance(id: number): Promise<number> {
      const channel = await mustFind(id);
      const balance = await fetchUpstreamBalance(channel.type, channel.baseUrl, lookupKey(channel), {
        proxy: channelProxy(channel.setting),
      });
      await repo.update(id, { balance, balanceUpdatedTime: nowSeconds() });
      return balance;
    },

    /**
     * Refreshes the balance of every enabled channel whose type publishes one; a channel with nothing left is
     * disabled automatically (status 3) with the reason in other_info.
     */
    async updateAllBalances(): Promise<{ updated: number; failed: number; disabled: number }> {
      const result = { updated: 0, failed: 0, disabled: 0 };
      for (const channel of await repo.all()) {
        if (channel.status !== ChannelStatus.Enabled || !findProviderType(channel.type)?.balance) continue;
        let balance: number;
        try {
          balance = await fetchUpstreamBalance(channel.type, channel.baseUrl, lookupKey(channel), {
            proxy: channelProxy(channel.setting),
          });
        } catch {
          result.failed++;
          continue;
        }
        const now = nowSeconds();
        const patch: Partial<NewChannel> = { balance, balanceUpdatedTime: now };
        if (balance <= 0) {
          patch.status = ChannelStatus.AutoDisabled;
          patch.otherInfo = JSON.stringify({ status_reason: 'balance exhausted', status_time: now });
        }
        await write(async (tx) => {
          const row = await createChannelRepo(tx).update(channel.id, patch);
          return row ? [row] : [];
        });
        result.updated++;
        if (balance <= 0) result.disabled++;
      }
      return result;
    },
  };
}
