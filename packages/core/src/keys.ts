import { createHash, createHmac, hash } from 'node:crypto';
import type { CompiledRule, Descriptors } from './types.js';

/** Digest bytes a tag keeps: 128 bits, 22 base64url characters; collisions are not a practical concern. */
const TAG_BYTES = 16;

/** Hashes text to a short base64url string (22 characters); keyed (HMAC) when a secret is given. */
export function hashText(text: string, secret?: string): string {
  // One-shot hash (no Hash object per call); encoding only the bytes kept makes a flat 22-character string,
  // where slicing a longer one would keep the whole digest text alive in every stored key.
  const digest = secret ? createHmac('sha256', secret).update(text).digest() : hash('sha256', text, 'buffer');
  return digest.toString('base64url', 0, TAG_BYTES);
}

/** The text a rule's tag hashes: its key descriptor names and values; undefined when one is missing. */
function keyText(rule: CompiledRule, descriptors: Descriptors): string | undefined {
  if (rule.global) return `global:${rule.name}`;
  const parts: string[] = [];
  for (const name of rule.key) {
    const value = descriptors[name];
    if (value === undefined) return undefined;
    parts.push(name, value);
  }
  // JSON encoding keeps ['a:b'] and ['a', 'b'] apart.
  return JSON.stringify(parts);
}

/**
 * The counter tag of a rule for a request: a hash of the rule's key descriptor names and values, so raw
 * values (API keys, IPs, arbitrary user input) never reach a store key and cannot collide or break a
 * Redis hash tag. Rules keyed on the same descriptors share a tag (and so a Redis Cluster slot).
 * Returns undefined when a key descriptor is missing: the rule has nothing to count on.
 */
export function tagFor(rule: CompiledRule, descriptors: Descriptors, secret?: string): string | undefined {
  const text = keyText(rule, descriptors);
  return text === undefined ? undefined : hashText(text, secret);
}

/** Default number of tags a {@link TagCache} keeps. */
export const DEFAULT_TAG_CACHE_SIZE = 50_000;

/**
 * Remembers recent tags so that a busy key is hashed once, not on every request. Keyed by the rule's key
 * text; the tags themselves are the same hashes `tagFor` makes. The cache lives in process memory only.
 * Bounded: when full, the oldest entry goes (insertion order; a cache needs no exact LRU).
 */
export class TagCache {
  readonly #tags = new Map<string, string>();
  readonly #secret: string | undefined;
  readonly #maxSize: number;

  constructor(secret: string | undefined, maxSize = DEFAULT_TAG_CACHE_SIZE) {
    this.#secret = secret;
    this.#maxSize = maxSize;
  }

  /** Same answer as `tagFor(rule, descriptors, secret)`. */
  tagFor(rule: CompiledRule, descriptors: Descriptors): string | undefined {
    const text = keyText(rule, descriptors);
    if (text === undefined) return undefined;
    const tags = this.#tags;
    let tag = tags.get(text);
    if (tag === undefined) {
      tag = hashText(text, this.#secret);
      if (tags.size >= this.#maxSize) tags.delete(tags.keys().next().value as string);
      tags.set(text, tag);
    }
    return tag;
  }
}

/** A stable percentage bucket (0-99.99) for rollout, from a tag. */
export function rolloutBucket(tag: string): number {
  const digest = createHash('sha256').update(tag).digest();
  return (digest.readUInt32BE(0) % 10_000) / 100;
}
