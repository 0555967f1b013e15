/**
 * Migration 0007 moves the price entries a ModelPrice owned out of the price maps (where the operator used to
 * write them) into their `option_sources` rows, so a deployment that upgrades serves the same prices and a later
 * delete of the resource takes the entry away. The data statements are run against rows shaped as before.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDb, type Database } from '../db/client.ts';
import { migrate } from '../db/migrate.ts';
import { optionSources } from '../db/schema/option-sources.ts';
import { options as optionsTable } from '../db/schema/options.ts';
import { createMemoryBus } from '../events/bus.ts';
import { createOptionStore } from './store.ts';

let database: Database;
beforeAll(async () => {
  database = await createDb({});
  await migrate(database);
});
afterAll(async () => {
  await database?.close();
});

const dataStatements = readFileSync(
  new URL('../../migrations/0007_option_source_values.sql', import.meta.url),
  'utf8',
)
  .split('--> statement-breakpoint')
  .map((s) => s.trim())
  .filter((s) => !s.startsWith('ALTER TABLE'));

it('moves owned entries out of the price maps into their rows, serving the same prices', async () => {
  const { db } = database;
  await db.insert(optionsTable).values([
    { key: 'ModelRatio', value: '{"mine":2,"owned":1.25,"owned/with-slash":0.5}' },
    { key: 'CompletionRatio', value: '{"owned":4}' },
    { key: 'SystemName', value: 'Acme' },
  ]);
  const source = {
    sourceKind: 'ModelPrice',
    sourceNamespace: 'team-a',
    sourceName: 'p',
    sourceGeneration: 3,
  };
  await db.insert(optionSources).values([
    { optionKey: 'ModelRatio', entry: 'owned', ...source },
    { optionKey: 'ModelRatio', entry: 'owned/with-slash', ...source },
    { optionKey: 'CompletionRatio', entry: 'owned', ...source },
    { optionKey: 'CacheRatio', entry: 'lost', ...source }, // owned but missing from its map: dropped, re-applied
    { optionKey: 'SystemName', entry: '', ...source, sourceKind: 'GatewayOption' },
  ]);
  for (const statement of dataStatements) await db.execute(sql.raw(statement));

  const rows = await db.select().from(optionSources);
  expect(rows.map((r) => `${r.optionKey}[${r.entry}]=${r.value}`).sort()).toEqual([
    'CompletionRatio[owned]=4',
    'ModelRatio[owned/with-slash]=0.5',
    'ModelRatio[owned]=1.25',
    'SystemName[]=null',
  ]);
  const maps = new Map((await db.select().from(optionsTable)).map((r) => [r.key, r.value]));
  expect(JSON.parse(maps.get('ModelRatio') as string)).toEqual({ mine: 2 });
  expect(JSON.parse(maps.get('CompletionRatio') as string)).toEqual({});
  expect(maps.get('SystemName')).toBe('Acme');

  const store = createOptionStore({ db, bus: createMemoryBus() });
  await store.load();
  expect(store.get('ModelRatio')).toEqual({ mine: 2, owned: 1.25, 'owned/with-slash': 0.5 });
  expect(store.get('CompletionRatio')).toEqual({ owned: 4 });
});
