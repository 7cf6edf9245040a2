/** Longest string a message quotes whole. */
const MAX_SHOWN = 80;

/** A value as a message shows it: strings quoted, containers named by kind. */
export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    // A message quotes a value, never a megabyte of it.
    if (value.length <= MAX_SHOWN) return JSON.stringify(value);
    return `${JSON.stringify(value.slice(0, MAX_SHOWN))}… (${value.length} characters)`;
  }
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return String(value);
}

/** Field path as written in messages: `rules[2].limit.per`, `match["x-api-key"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(segment)))
      out += out ? `.${String(segment)}` : String(segment);
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

/** The closest candidate within a small edit distance, for "did you mean" hints. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  // One edit per three letters (at least one): "limt" finds "limit", "zz" finds nothing.
  let bestDistance = Math.max(1, Math.floor(word.length / 3)) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
