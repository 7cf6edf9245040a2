/**
 * What a store that holds states as objects keeps after writing `next` over `held`: `held` itself with `next`'s
 * fields copied in, when both are plain objects with the same keys (one algorithm's state, call after call);
 * else `next`. A busy counter so keeps one object for its life, not a new one per check: nothing for the
 * collector to copy and promote, and the state stays where the CPU caches last saw it, which on a served
 * request is most of a counter's cost. Algorithms never change a state; only the store writes into its own.
 */
export function heldAfter(held: unknown, next: unknown): unknown {
  if (!isPlainObject(held) || !isPlainObject(next) || held === next) return next;
  // Copied first, then the keys counted: only a held object with keys of its own left over is given up.
  let keys = 0;
  for (const key in next) {
    held[key] = next[key];
    keys++;
  }
  for (const _ in held) keys--;
  return keys === 0 ? held : next;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
