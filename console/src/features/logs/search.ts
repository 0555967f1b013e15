import { LogType } from '@turnpike/core/domain/closed-sets';
import { choiceParam, listSearch, textParam } from '../../components/data-table/index.ts';

/**
 * The usage log's URL: every filter and the page. `start` and `end` are datetime-local texts; absent means the
 * default range (today so far, see rules.ts `defaultLogRange`), so a bare link always shows today.
 */
export const logsSearch = listSearch({
  type: choiceParam(Object.values(LogType).map(String) as [string, ...string[]], String(LogType.Unknown)),
  token_name: textParam,
  model_name: textParam,
  group: textParam,
  start: textParam,
  end: textParam,
  username: textParam,
  channel: textParam,
});
