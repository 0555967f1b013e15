import { listSearch, textParam } from '../../components/data-table/index.ts';

/**
 * The token list's URL: the name keyword and the page. The key search stays out of the URL on purpose: a key in
 * a link would end up in browser history, proxies' logs and wherever the link is pasted.
 */
export const tokensSearch = listSearch({ keyword: textParam });
