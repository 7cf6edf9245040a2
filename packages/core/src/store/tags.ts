import { createHash, createHmac, hash } from 'node:crypto';
import type { CompiledRule, Descriptors } from '../rules/contract.js';

/*
 * Counter tags: the hashed name of the counter a rule and a request's descriptors count on, so raw values never
 * reach a store key. In store/ beside the key format around the tag (keys.ts) and the slot hint an in-process
 * store keeps in each cached tag (slotIndex.ts); the engine, the decision log and escalation read them.
 */

/** Digest bytes a tag keeps: 128 bits, 22 base64url characters; collisions are not a practical concern. */
const TAG_BYTES = 16;

/** Hashes text to a short base64url string (22 characters); keyed (HMAC) when a secret is given. */
export function hashText(text: string, secret?: string): string {
  // One-shot hash (no Hash object per call); encoding only the bytes kept makes a flat 22-character string,
  // where slicing a longer one would keep the whole digest text alive in every stored key.
  const digest = secret ? createHmac('sha256', secret).update(text).digest() : hash('sha256', text, 'buffer');
  return digest.toString('base64url', 0, TAG_BYTES);
}

/** What of a rule makes its counter tag: its name (for a global rule) and key descriptor names. */
export type KeyedRule = Pick<CompiledRule, 'name' | 'global' | 'key'>;

/** The text a rule's tag hashes: its key descriptor names and values; undefined when one is missing. */
function keyText(rule: KeyedRule, descriptors: Descriptors): string | undefined {
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
export function tagFor(rule: KeyedRule, descriptors: Descriptors, secret?: string): string | undefined {
  const text = keyText(rule, descriptors);
  return text === undefined ? undefined : hashText(text, secret);
}

/**
 * The descriptor carrying a request's Idempotency-Key (the HTTP layer puts the header's hash there); a rule
 * with `idempotent` charges a key once per value of it.
 */
export const IDEMPOTENCY_DESCRIPTOR = 'idempotency_key';

/**
 * The `idempotency_key` descriptor of a request's Idempotency-Key header (its first value, trimmed): hashed
 * at once, so the key's text reaches no log, descriptor or store; undefined when absent or blank.
 */
export function idempotencyDescriptor(header: string | readonly string[] | undefined): string | undefined {
  const value = (typeof header === 'string' ? header : header?.[0])?.trim();
  return value === undefined || value === '' ? undefined : hashText(value);
}

/** Default number of tags a {@link TagCache} keeps per set of key descriptors. */
export const DEFAULT_TAG_CACHE_SIZE = 50_000;

/** A tag the cache holds, with the store's hint for its counters (see SlotHint). */
export interface CachedTag {
  readonly tag: string;
  /** Written by an in-process store: where it last found this tag's counters. */
  slot: number;
}

function cachedTag(tag: string): CachedTag {
  return { tag, slot: -1 };
}

/**
 * Remembers recent tags so that a busy key is hashed once, not on every request. The tags are the same
 * hashes `tagFor` makes; the cache lives in process memory only. Rules keyed on the same descriptor names
 * share one cache, keyed by the values alone (a single value as is: no text is built per request), and a
 * global rule's tag is made once. Each tag comes with a hint an in-process store keeps in it, so that the
 * store finds the tag's counters without a lookup of its own. Bounded, at the same cost per new key however
 * many go by: see {@link Generations}.
 */
export class TagCache {
  /** Key descriptor names (JSON) -> values (JSON, or the value itself for one name) -> tag. */
  readonly #byKey = new Map<string, Generations>();
  readonly #global = new Map<string, CachedTag>();
  readonly #secret: string | undefined;
  readonly #maxSize: number;
  /** The same maps by the names array itself, a compiled rule's own: found without building its signature. */
  readonly #byNames = new WeakMap<readonly string[], Generations>();
  #lastNames: readonly string[] | undefined;
  #lastTags: Generations | undefined;

  constructor(secret: string | undefined, maxSize = DEFAULT_TAG_CACHE_SIZE) {
    this.#secret = secret;
    this.#maxSize = maxSize;
  }

  /** Tags held, over every set of key names (global tags included). */
  get size(): number {
    let size = this.#global.size;
    for (const tags of this.#byKey.values()) size += tags.size;
    return size;
  }

  /**
   * The id of a request's Idempotency-Key in store keys: hashed (keyed with the secret) like a tag, so the
   * key's text never reaches a store, and any length becomes 22 characters.
   */
  idempotencyId(value: string): string {
    return hashText(`idempotency:${value}`, this.#secret);
  }

  /** Same answer as `tagFor(rule, descriptors, secret)`. */
  tagFor(rule: CompiledRule, descriptors: Descriptors): string | undefined {
    return this.cachedTagFor(rule, descriptors)?.tag;
  }

  /** The tag `tagFor` answers, held with its store hint; the same object for as long as the tag is cached. */
  cachedTagFor(rule: CompiledRule, descriptors: Descriptors): CachedTag | undefined {
    if (rule.global) return this.#globalTag(rule);
    const names = rule.key;
    let values: string | undefined;
    if (names.length === 1) values = descriptors[names[0]!];
    else {
      const parts: string[] = new Array(names.length);
      for (let i = 0; i < names.length; i++) {
        const value = descriptors[names[i]!];
        if (value === undefined) return undefined;
        parts[i] = value;
      }
      values = JSON.stringify(parts);
    }
    if (values === undefined) return undefined;
    const tags = this.#tagsOf(names);
    let cached = tags.get(values);
    if (cached === undefined) {
      cached = cachedTag(tagFor(rule, descriptors, this.#secret) as string);
      tags.set(values, cached);
    }
    return cached;
  }

  #globalTag(rule: CompiledRule): CachedTag {
    let cached = this.#global.get(rule.name);
    if (cached === undefined) {
      cached = cachedTag(hashText(`global:${rule.name}`, this.#secret));
      // Global rules are few (they are named in the rules file); the bound only guards against misuse.
      if (this.#global.size >= this.#maxSize) this.#global.clear();
      this.#global.set(rule.name, cached);
    }
    return cached;
  }

  /** The map of one set of key names; found through the names array itself, a compiled rule's own. */
  #tagsOf(names: readonly string[]): Generations {
    // Most tables key on one set of names: the last one asked for answers with no lookup at all.
    if (names === this.#lastNames) return this.#lastTags!;
    let tags = this.#byNames.get(names);
    if (tags === undefined) {
      tags = this.#tagsBySignature(names);
      this.#byNames.set(names, tags);
    }
    this.#lastNames = names;
    this.#lastTags = tags;
    return tags;
  }

  #tagsBySignature(names: readonly string[]): Generations {
    let signature = signatures.get(names);
    if (signature === undefined) {
      signature = JSON.stringify(names);
      signatures.set(names, signature);
    }
    let tags = this.#byKey.get(signature);
    if (tags === undefined) {
      tags = new Generations(this.#maxSize);
      this.#byKey.set(signature, tags);
    }
    return tags;
  }
}

/**
 * A bounded map in two generations: new entries go to the young one; when it is full, the old one is
 * dropped whole and the young one becomes old; a hit in the old one is copied to the young one, so busy
 * entries stay. Nothing is ever deleted one by one: evicting a Map's oldest entry through its iterator
 * walks over the holes earlier deletions left, which made each new key cost about 60 µs once full.
 */
class Generations {
  readonly #generationSize: number;
  #young = new Map<string, CachedTag>();
  #old = new Map<string, CachedTag>();

  /** Holds at most `maxSize` entries (two generations of half each). */
  constructor(maxSize: number) {
    this.#generationSize = Math.max(1, Math.floor(maxSize / 2));
  }

  get size(): number {
    return this.#young.size + this.#old.size;
  }

  get(key: string): CachedTag | undefined {
    const value = this.#young.get(key);
    if (value !== undefined) return value;
    const old = this.#old.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: string, value: CachedTag): void {
    if (this.#young.size >= this.#generationSize) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(key, value);
  }
}

/** JSON of each compiled rule's key names, made once per rule (compiled rules are immutable). */
const signatures = new WeakMap<readonly string[], string>();

/** A stable percentage bucket (0-99.99) for rollout, from a tag. */
export function rolloutBucket(tag: string): number {
  const digest = createHash('sha256').update(tag).digest();
  return (digest.readUInt32BE(0) % 10_000) / 100;
}
