import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';

export interface ServerPages<T> {
  /** The rows of the page on screen. */
  rows: T[];
  /** 1-based page on screen. */
  page: number;
  /** Rows loaded so far: the lists answer no total, so this is what the footer counts. */
  loaded: number;
  /** The last server page was full, so there may be another one. */
  hasMore: boolean;
  /** The first page has not arrived yet. */
  isLoading: boolean;
  isFetching: boolean;
  isError: boolean;
  goTo: (page: number) => Promise<void>;
}

/**
 * The task logs' paging rule (spec 03, drawing log): the list loads server page 0 first; going to the page
 * after the loaded ones fetches the next server page, earlier pages come from what is loaded. One server page
 * is one screen page (the page size is sent), and a short or empty server page means the list is complete.
 * A new `queryKey` (filters, a new query) starts again from page 0.
 */
export function useServerPages<T>({
  queryKey,
  pageSize,
  fetchPage,
}: {
  queryKey: readonly unknown[];
  pageSize: number;
  fetchPage: (page: number, pageSize: number) => Promise<T[]>;
}): ServerPages<T> {
  const key = [...queryKey, pageSize];
  const [page, setPage] = useState(1);
  const [pageOf, setPageOf] = useState(() => JSON.stringify(key));
  const keyText = JSON.stringify(key);
  // a new list (filters, page size) starts again on its first page
  if (pageOf !== keyText) {
    setPageOf(keyText);
    setPage(1);
  }

  const query = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam }) => fetchPage(pageParam, pageSize),
    initialPageParam: 0,
    getNextPageParam: (last, all) => (last.length >= pageSize ? all.length : undefined),
  });

  const all = query.data?.pages.flat() ?? [];
  const current = pageOf === keyText ? page : 1;
  const lastLoaded = Math.max(1, Math.ceil(all.length / pageSize));
  const shown = Math.min(current, lastLoaded);

  const goTo = async (next: number) => {
    if (next < 1) return;
    if (next <= lastLoaded) {
      setPage(next);
      return;
    }
    if (next !== lastLoaded + 1 || !query.hasNextPage || query.isFetchingNextPage) return;
    const result = await query.fetchNextPage();
    const count = result.data?.pages.flat().length ?? 0;
    // an empty next page means the list ended exactly on the last loaded page: stay there
    if (count > (next - 1) * pageSize) setPage(next);
  };

  return {
    rows: all.slice((shown - 1) * pageSize, shown * pageSize),
    page: shown,
    loaded: all.length,
    hasMore: Boolean(query.hasNextPage),
    isLoading: query.isPending,
    isFetching: query.isFetching,
    isError: query.isError,
    goTo,
  };
}
