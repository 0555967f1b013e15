import { useNavigate, useSearch } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { z } from 'zod/mini';

/**
 * A list page's state in the URL: its filters and page live in the search string, so they survive a reload, Back
 * and Forward, and a copied link opens the same list. Every field falls back to its default when the URL holds
 * something unreadable, so a hand-edited or stale link never breaks the page.
 */

/*
 * zod's mini build: the same parsing in a few kilobytes, which the console's initial bundle (every route's search
 * is declared in the route tree) has room for; the full build does not fit the budget.
 */

/** The 1-based page of a list; a missing or broken value is 1. */
export const pageParam = z.catch(z.coerce.number().check(z.int(), z.minimum(1)), 1);

/** Search values the router read as JSON (`?a=123`, `?a=true`) back to the text they were typed as. */
const asText = z.transform((v: unknown) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v));

/**
 * A text filter, '' when absent. The router reads `?keyword=123` as the number 123 and `?keyword=true` as a
 * boolean (it parses search values as JSON), so those read back as the text they were typed as.
 */
export const textParam = z.catch(z._default(z.pipe(asText, z.string()), ''), '');

/** A choice among `values` (a status, a type), `fallback` when absent or not one of them. */
export const choiceParam = <const V extends readonly [string, ...string[]]>(values: V, fallback: V[number]) =>
  z.catch(z._default(z.pipe(asText, z.enum(values)), fallback), fallback);

/** The search string of one list page: `page` plus its filters, with the defaults it shows when the URL is bare. */
export interface ListSearch<S extends { page: number }> {
  /** The values with every default filled in; never throws. */
  parse(raw: unknown): S;
  readonly defaults: S;
  /**
   * For the route's `validateSearch`: only the values that differ from the defaults, so a bare link stays bare and
   * links to the page need no search.
   */
  validate(raw: Record<string, unknown>): Partial<S>;
}

const compact = <S extends object>(values: S, defaults: S): Partial<S> =>
  Object.fromEntries(
    Object.entries(values).filter(([key, value]) => value !== (defaults as Record<string, unknown>)[key]),
  ) as Partial<S>;

/** Declares a list page's search string from the zod fields of its filters (each with a default and a catch). */
export function listSearch<Shape extends Record<string, z.ZodMiniType>>(shape: Shape) {
  const schema = z.object({ page: pageParam, ...shape });
  type S = z.output<typeof schema> & { page: number };
  const parse = (raw: unknown): S => schema.parse(raw && typeof raw === 'object' ? raw : {}) as S;
  const defaults = parse({});
  const search: ListSearch<S> = {
    parse,
    defaults,
    validate: (raw) => compact(parse(raw), defaults),
  };
  return search;
}

/** The search type a {@link listSearch} declares. */
export type SearchOf<L> = L extends ListSearch<infer S> ? S : never;

/**
 * Reads a list page's search from the URL and changes it. Applying filters or turning a page adds a history
 * entry (Back returns to the previous filters); the URL holds only what differs from the defaults.
 */
export function useListSearch<S extends { page: number }>(list: ListSearch<S>) {
  const raw = useSearch({ strict: false });
  const search = useMemo(() => list.parse(raw), [list, raw]);
  const navigate = useNavigate();
  const go = (next: S) => void navigate({ to: '.', search: compact(next, list.defaults) as never });
  return {
    search,
    /** Applies new filters, from the first page. */
    apply: (filters: Partial<Omit<S, 'page'>>) => go({ ...search, ...filters, page: 1 }),
    setPage: (page: number) => go({ ...search, page }),
    /** Back to the defaults (a bare URL). */
    reset: () => go(list.defaults),
    /** Whether any filter differs from its default (the page number does not count). */
    isFiltered: Object.keys(compact({ ...search, page: 1 }, list.defaults)).length > 0,
  };
}

/**
 * The filter form's fields while they are typed: they start from the filters in the URL and start over whenever
 * those change (Back, Forward, a link), so the form always shows what the list shows once applied.
 */
export function useFilterDraft<F extends { [K in keyof F]: string }>(applied: F) {
  const key = JSON.stringify(applied);
  const [state, setState] = useState({ key, draft: applied });
  if (state.key !== key) setState({ key, draft: applied });
  const draft = state.key === key ? state.draft : applied;
  const set = (change: Partial<F>) => setState({ key, draft: { ...draft, ...change } });
  return {
    draft,
    set,
    /** Drops what was typed: the form shows the applied filters again. */
    discard: () => setState({ key, draft: applied }),
    /** `value` and `onChange` for an input or select bound to one field. */
    field: (name: keyof F & string) => ({
      value: draft[name],
      onChange: (e: { target: { value: string } }) => set({ [name]: e.target.value } as Partial<F>),
    }),
  };
}
