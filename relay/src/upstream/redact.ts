/**
 * Channel credentials never reach a client or a log (issue 16 item 1). Upstreams echo the key they were sent in
 * error messages, whole (`Incorrect API key provided: sk-…`) or masked (`sk-...abcd`, `sk-ab****cdef`,
 * `AIza…`): every upstream text the relay shows or logs goes through the channel's redactor first.
 *
 * What is removed: the key itself; for a key of 16 or more characters, any run of 8 or more key characters, letters
 * and digits, that is part of the key (a prefix or a suffix printed beside a mask; a plain word is left alone); and any masked form — a word with `...`, `…` or `**` in it — whose visible ends
 * (4 characters or more) match the key's ends. The check `mayContain` is a few substring searches, so a stream's
 * chunks pay for a full pass only when one may hold a credential.
 */

const REDACTED = '[redacted]';
/** Words that may be a key or a piece of one. */
const KEY_RUN = /[A-Za-z0-9_-]{8,}/g;
/** Words with a mask in them (`sk-...abcd`, `sk-ab****cdef`, `sk-…xyz1`). */
const MASKED = /[A-Za-z0-9_-]*(?:(?:\.{3}|…|\*{2,})[A-Za-z0-9_-]*)+/g;

export interface Redactor {
  /** Whether `text` may contain a credential (cheap; false means surely not). */
  mayContain(text: string): boolean;
  /** `text` with every credential of the channel replaced by `[redacted]`. */
  redact(text: string): string;
}

export const NO_REDACTION: Redactor = { mayContain: () => false, redact: (text) => text };

const stripPrefix = (key: string): string => key.replace(/^(sk-(proj-|ant-(api\d+-)?)?|Bearer\s+)/i, '');

/** A redactor for a channel's key (a multi-line key: each line is a credential). */
export function createRedactor(key: string | undefined): Redactor {
  const keys = (key ?? '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length >= 8);
  if (keys.length === 0) return NO_REDACTION;
  // Pieces and masks are looked for only for keys long enough to be random (a provider's keys are 32 or more
  // characters): the body of a short key can be a plain word.
  const bodies = keys.map(stripPrefix).filter((body) => body.length >= 16);
  if (bodies.length === 0) {
    return {
      mayContain: (text) => keys.some((whole) => text.includes(whole)),
      redact: (text) => keys.reduce((out, whole) => out.split(whole).join(REDACTED), text),
    };
  }
  // Markers: the last 4 characters, and the first 6 after a known prefix.
  const markers = [...new Set(bodies.flatMap((body) => [body.slice(-4), body.slice(0, 6)]))];
  // A piece must look random (letters and digits): a key chosen by hand can hold plain words ("upstream"), and
  // an answer that uses the word must reach the client as written.
  const looksRandom = (piece: string) => /\d/.test(piece) && /[A-Za-z]/.test(piece);
  const isPieceOfKey = (word: string) => {
    const piece = stripPrefix(word);
    return looksRandom(piece) && bodies.some((body) => body.includes(piece));
  };
  const isMaskOfKey = (word: string) => {
    const visible = word.split(/\.{3}|…|\*+/).filter((part) => part !== '');
    // A word that opens with the mask shows only the key's end; one that closes with it only its start.
    const head = /^(\.{3}|…|\*)/.test(word) ? '' : stripPrefix(visible[0] ?? '');
    const tail =
      /(\.{3}|…|\*)$/.test(word) || (visible.length < 2 && head !== '') ? '' : (visible.at(-1) ?? '');
    return bodies.some(
      (body) => (tail.length >= 4 && body.endsWith(tail)) || (head.length >= 4 && body.startsWith(head)),
    );
  };
  return {
    mayContain: (text) => markers.some((marker) => text.includes(marker)),
    redact(text) {
      if (!markers.some((marker) => text.includes(marker))) return text;
      let out = text;
      for (const whole of keys) out = out.split(whole).join(REDACTED);
      out = out.replace(MASKED, (word) => (isMaskOfKey(word) ? REDACTED : word));
      return out.replace(KEY_RUN, (word) => (isPieceOfKey(word) ? REDACTED : word));
    },
  };
}

const cache = new WeakMap<object, Redactor>();

/** The redactor of a channel, made once per channel object (a reload makes new ones). */
export function redactorOf(channel: { readonly key: string | undefined }): Redactor {
  let redactor = cache.get(channel);
  if (redactor === undefined) {
    redactor = createRedactor(channel.key);
    cache.set(channel, redactor);
  }
  return redactor;
}
