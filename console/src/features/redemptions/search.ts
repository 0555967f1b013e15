import { listSearch, textParam } from '../../components/data-table/index.ts';

/** The redemption list's URL: the name or id keyword and the page. */
export const redemptionsSearch = listSearch({ keyword: textParam });
