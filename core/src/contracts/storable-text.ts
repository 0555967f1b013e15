/**
 * Text Postgres refuses or cannot keep: a NUL character (`invalid byte sequence for encoding "UTF8": 0x00`) and
 * UTF-16 lone surrogates (no UTF-8 form; the driver would store U+FFFD instead of what was sent). Request text is
 * checked at the edge, so such input is a 400 that names the field, never a 500 from deep in a query.
 */

/** True when `text` can be stored and read back unchanged. */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && text.isWellFormed();
}

/**
 * The path (`name`, `items.2.tag`, or `''` for the value itself) of the first string — or object key — in `value`
 * that is not storable, else undefined. Walks with its own stack, so a deeply nested body cannot overflow the call
 * stack.
 */
export function findUnstorableText(value: unknown, root = ''): string | undefined {
  const pending: Array<[unknown, string]> = [[value, root]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, path] = next;
    if (typeof item === 'string') {
      if (!isStorableText(item)) return path;
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], join(path, String(i))]);
    } else if (item !== null && typeof item === 'object') {
      const keys = Object.keys(item);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        if (!isStorableText(key)) return join(path, printable(key));
        pending.push([(item as Record<string, unknown>)[key], join(path, key)]);
      }
    }
  }
  return undefined;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** A key fit to quote in a message: the refused characters shown as escapes. */
function printable(key: string): string {
  return key.replaceAll('\u0000', '\\u0000').toWellFormed();
}
