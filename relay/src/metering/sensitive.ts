/**
 * Multi-pattern word matching (Aho–Corasick) for sensitive-word checks on prompts and completions and for the
 * auto-disable keywords of upstream error messages (reference §4.7, §9.2).
 *
 * Building costs time proportional to the total length of the words; a search costs time proportional to the
 * text plus the matches, whatever the number of words. Matching works on UTF-16 code units folded to lower case
 * one unit at a time (so offsets in the original text stay valid, and a match can be replaced in place).
 */

/** One occurrence of a word in a text: `text.slice(start, end)` is the word, in the text's own case. */
export interface WordMatch {
  /** The word as it was given to the matcher. */
  readonly word: string;
  readonly start: number;
  readonly end: number;
}

export interface WordMatcher {
  /** Number of distinct (non-empty) words. */
  readonly size: number;
  /** Every occurrence, overlapping ones included, ordered by end offset. */
  findAll(text: string): WordMatch[];
  /** The distinct words that occur, in order of first occurrence. */
  findWords(text: string): string[];
  /** Whether any word occurs; stops at the first one. */
  hasMatch(text: string): boolean;
  /** The text with every occurrence replaced (overlapping ones merged into one span). */
  replaceAll(text: string, replacement: string): string;
  /**
   * A scanner for text that arrives in pieces (a streamed completion): it keeps only its automaton state, not the
   * text, and finds words split across pieces. Offsets are counted from the start of the first piece.
   */
  createScanner(): WordScanner;
}

export interface WordScanner {
  /** Feeds the next piece; returns the occurrences that end inside it. */
  push(piece: string): WordMatch[];
}

export interface WordMatcherOptions {
  /** Default true: "Permission Denied" matches the word "permission denied". */
  readonly caseInsensitive?: boolean;
}

let lowerTable: Uint16Array | undefined;

/** Lower-case of one UTF-16 unit, where that is again one unit (else the unit itself). */
function lowerTableOf(): Uint16Array {
  if (lowerTable) return lowerTable;
  const table = new Uint16Array(65536);
  for (let code = 0; code < 65536; code += 1) {
    // Surrogates on their own are not characters; leave them (and any multi-unit lower case) unchanged.
    const lower = code >= 0xd800 && code <= 0xdfff ? code : String.fromCharCode(code).toLowerCase();
    table[code] = typeof lower === 'number' ? lower : lower.length === 1 ? lower.charCodeAt(0) : code;
  }
  lowerTable = table;
  return table;
}

/** Builds a matcher for the given words; empty and duplicate words are ignored. */
export function createWordMatcher(words: Iterable<string>, options: WordMatcherOptions = {}): WordMatcher {
  const fold = options.caseInsensitive === false ? undefined : lowerTableOf();
  const unit = (text: string, index: number): number => {
    const code = text.charCodeAt(index);
    return fold ? (fold[code] as number) : code;
  };

  // Trie: node 0 is the root. Edges are kept in one Map per node (sparse alphabets: CJK, emoji).
  const edges: Map<number, number>[] = [new Map()];
  const wordAt: number[] = [-1]; // index into `list` of the word ending at a node, or -1
  const depth: number[] = [0];
  const list: string[] = [];
  const seen = new Set<string>();
  for (const word of words) {
    if (word === '') continue;
    const key = fold ? foldString(word, unit) : word;
    if (seen.has(key)) continue;
    seen.add(key);
    let node = 0;
    for (let i = 0; i < word.length; i += 1) {
      const code = unit(word, i);
      const map = edges[node] as Map<number, number>;
      let child = map.get(code);
      if (child === undefined) {
        child = edges.length;
        edges.push(new Map());
        wordAt.push(-1);
        depth.push((depth[node] as number) + 1);
        map.set(code, child);
      }
      node = child;
    }
    wordAt[node] = list.length;
    list.push(word);
  }

  // Failure links (longest proper suffix that is a trie node) and output links (nearest suffix ending a word),
  // computed breadth first.
  const fail = new Int32Array(edges.length);
  const outLink = new Int32Array(edges.length).fill(-1);
  const queue: number[] = [];
  for (const child of (edges[0] as Map<number, number>).values()) queue.push(child);
  for (let head = 0; head < queue.length; head += 1) {
    const node = queue[head] as number;
    for (const [code, child] of edges[node] as Map<number, number>) {
      let f = fail[node] as number;
      while (f !== 0 && !(edges[f] as Map<number, number>).has(code)) f = fail[f] as number;
      const target = (edges[f] as Map<number, number>).get(code);
      const link = target !== undefined && target !== child ? target : 0;
      fail[child] = link;
      outLink[child] = (wordAt[link] as number) >= 0 ? link : (outLink[link] as number);
      queue.push(child);
    }
  }

  const step = (node: number, code: number): number => {
    let current = node;
    for (;;) {
      const next = (edges[current] as Map<number, number>).get(code);
      if (next !== undefined) return next;
      if (current === 0) return 0;
      current = fail[current] as number;
    }
  };

  /** Runs the automaton over `text` from `state`; calls `emit` per occurrence (return true to stop). */
  const run = (
    text: string,
    state: number,
    offset: number,
    emit: (wordIndex: number, end: number) => boolean,
  ): number => {
    let node = state;
    for (let i = 0; i < text.length; i += 1) {
      node = step(node, unit(text, i));
      let hit = (wordAt[node] as number) >= 0 ? node : (outLink[node] as number);
      while (hit > 0) {
        if (emit(wordAt[hit] as number, offset + i + 1)) return -1;
        hit = outLink[hit] as number;
      }
    }
    return node;
  };

  const toMatch = (wordIndex: number, end: number): WordMatch => {
    const word = list[wordIndex] as string;
    return { word, start: end - word.length, end };
  };

  return {
    size: list.length,
    findAll(text) {
      const out: WordMatch[] = [];
      run(text, 0, 0, (index, end) => {
        out.push(toMatch(index, end));
        return false;
      });
      return out;
    },
    findWords(text) {
      const found = new Set<string>();
      run(text, 0, 0, (index) => {
        found.add(list[index] as string);
        return false;
      });
      return [...found];
    },
    hasMatch(text) {
      if (list.length === 0) return false;
      return run(text, 0, 0, () => true) === -1;
    },
    replaceAll(text, replacement) {
      const spans: [number, number][] = [];
      run(text, 0, 0, (index, end) => {
        spans.push([end - (list[index] as string).length, end]);
        return false;
      });
      if (spans.length === 0) return text;
      spans.sort((a, b) => a[0] - b[0]);
      let out = '';
      let cursor = 0;
      let [spanStart, spanEnd] = spans[0] as [number, number];
      for (const [start, end] of spans) {
        if (start <= spanEnd) {
          spanEnd = Math.max(spanEnd, end);
          continue;
        }
        out += text.slice(cursor, spanStart) + replacement;
        cursor = spanEnd;
        spanStart = start;
        spanEnd = end;
      }
      out += text.slice(cursor, spanStart) + replacement;
      return out + text.slice(spanEnd);
    },
    createScanner() {
      let state = 0;
      let offset = 0;
      return {
        push(piece) {
          const out: WordMatch[] = [];
          state = run(piece, state, offset, (index, end) => {
            out.push(toMatch(index, end));
            return false;
          });
          offset += piece.length;
          return out;
        },
      };
    },
  };
}

function foldString(text: string, unit: (text: string, index: number) => number): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) out += String.fromCharCode(unit(text, i));
  return out;
}
