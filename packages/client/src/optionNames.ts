import { ClientConfigError } from './errors.js';

/**
 * Refuses an options object with a name the client does not know, naming the option meant when one is
 * close: the same name in other case (`maxattempts`), or one sharing a long start (`maxAttempt`). This
 * package depends on nothing, so it keeps its own small hint rather than core's edit distance.
 */
export function checkNames(owner: string, options: object | undefined, known: readonly string[]): void {
  if (options === undefined || options === null) return;
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue;
    const hint = meant(name, known);
    const prefix = owner === '' ? '' : `${owner}: `;
    throw new ClientConfigError(
      `${prefix}unknown option "${name}"${hint === undefined ? '' : ` (did you mean "${hint}"?)`}`,
    );
  }
}

/** The known name meant by `name`, if one is close enough. */
function meant(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameLetters = known.find((candidate) => candidate.toLowerCase() === lower);
  if (sameLetters !== undefined) return sameLetters;
  let best: string | undefined;
  let bestShared = Math.max(4, Math.ceil(name.length * 0.6)) - 1;
  for (const candidate of known) {
    const shared = sharedStart(lower, candidate.toLowerCase());
    if (shared > bestShared) {
      best = candidate;
      bestShared = shared;
    }
  }
  return best;
}

/** How many leading characters two strings share. */
function sharedStart(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
