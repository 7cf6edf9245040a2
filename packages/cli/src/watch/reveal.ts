import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { MergedBoard } from '@sluice/core';
import { UsageError } from '../io.js';

/**
 * The app's own lookup from a counter tag to what it stands for (an account, a tenant): a module exporting
 * `reveal(tag, rule)` (or a default function) that answers a name, or undefined when it does not know the tag.
 * Only the viewers call it, for the tags they show: nothing in clear is ever stored.
 */
export type RevealFunction = (tag: string, rule: string) => string | undefined | Promise<string | undefined>;

/** Names of shown tags, each asked of the app once (the answers kept, up to a bound). */
export interface Reveal {
  names(board: MergedBoard): Promise<Record<string, string>>;
}

/** Answers kept at most; past it, the oldest go. */
const KEPT = 10_000;

/** A Reveal over the app's function. A throwing or rejecting call shows the tag as is. */
export function revealWith(reveal: RevealFunction): Reveal {
  const known = new Map<string, string | undefined>();
  const ask = async (tag: string, rule: string) => {
    if (known.has(tag)) return;
    let name: string | undefined;
    try {
      const answer = await reveal(tag, rule);
      name = typeof answer === 'string' && answer !== '' ? answer : undefined;
    } catch {
      name = undefined;
    }
    if (known.size >= KEPT) known.delete(known.keys().next().value!);
    known.set(tag, name);
  };
  return {
    async names(board) {
      // Each tag once, though it may be shown under several rules and in both lists.
      const shown = new Map<string, string>();
      for (const rule of board.rules)
        for (const key of [...rule.keys.keys, ...rule.denials.keys])
          if (!shown.has(key.tag)) shown.set(key.tag, rule.rule);
      await Promise.all([...shown].map(([tag, rule]) => ask(tag, rule)));
      const names: Record<string, string> = {};
      for (const tag of shown.keys()) {
        const name = known.get(tag);
        if (name !== undefined) names[tag] = name;
      }
      return names;
    },
  };
}

/** The `--reveal <module>` file's function, loaded. */
export async function loadReveal(file: string): Promise<Reveal> {
  let loaded: { reveal?: unknown; default?: unknown };
  try {
    loaded = (await import(pathToFileURL(resolve(file)).href)) as typeof loaded;
  } catch (error) {
    throw new UsageError(`--reveal ${file} cannot be loaded: ${(error as Error).message}`);
  }
  const reveal = loaded.reveal ?? loaded.default;
  if (typeof reveal !== 'function')
    throw new UsageError(`--reveal ${file} must export a function reveal(tag, rule) (or a default one)`);
  return revealWith(reveal as RevealFunction);
}
