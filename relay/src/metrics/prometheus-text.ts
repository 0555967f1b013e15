/**
 * Reads samples back out of the Prometheus text exposition format (tests and `make bench` check what
 * `/metrics` serves). Only what a scrape of the relay produces: `name{label="value",...} number` lines.
 */

/** The value of the sample `name` whose labels include `labels`, or undefined when there is none. */
export function readSample(
  text: string,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    const close = rest[0] === '{' ? rest.lastIndexOf('}') : -1;
    const found = parseLabels(close === -1 ? '' : rest.slice(1, close));
    if (!Object.entries(labels).every(([key, value]) => found[key] === value)) continue;
    const value = Number(
      rest
        .slice(close + 1)
        .trim()
        .split(' ')[0],
    );
    // Several series may match a partial label set: their values add up.
    total = (total ?? 0) + value;
  }
  return total;
}

function parseLabels(body: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const pattern = /(\w+)="((?:[^"\\]|\\.)*)"/g;
  for (const match of body.matchAll(pattern)) {
    labels[match[1] as string] = (match[2] as string).replace(/\\(.)/g, (_all, c: string) =>
      c === 'n' ? '\n' : c,
    );
  }
  return labels;
}
