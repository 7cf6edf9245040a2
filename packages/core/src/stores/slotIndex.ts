/**
 * Most entries one Map of the index holds on average. V8 rebuilds a whole Map at once when it grows, and
 * again when deletions leave it full of holes or a quarter used: at about 0.2 µs an entry, a million-entry
 * Map stalled the event loop for 100-300 ms. Maps of a few thousand entries rebuild in well under 1 ms.
 */
export const KEYS_PER_SHARD = 4096;

/**
 * Counter identity -> slot number, split over enough small Maps that none holds more than about
 * {@link KEYS_PER_SHARD} entries at `maxKeys`: the shard is picked by a hash of the tag, then one Map per
 * rule inside the shard (tags repeat across rules keyed on the same descriptors).
 */
export class SlotIndex {
  readonly #mask: number;
  #shards: (Map<string, Map<string, number>> | undefined)[];

  constructor(maxKeys: number) {
    this.#mask = shardCount(maxKeys) - 1;
    this.#shards = new Array(this.#mask + 1).fill(undefined);
  }

  /** The slot of a counter, if held. */
  get(rule: string, tag: string): number | undefined {
    return this.#shards[shardHash(tag) & this.#mask]?.get(rule)?.get(tag);
  }

  /** The Map a counter belongs in, made if needed; the caller keeps it to delete the entry later. */
  mapFor(rule: string, tag: string): Map<string, number> {
    const index = shardHash(tag) & this.#mask;
    let shard = this.#shards[index];
    if (shard === undefined) {
      shard = new Map();
      this.#shards[index] = shard;
    }
    let map = shard.get(rule);
    if (map === undefined) {
      map = new Map();
      shard.set(rule, map);
    }
    return map;
  }

  /** Forgets every counter. */
  clear(): void {
    this.#shards = new Array(this.#mask + 1).fill(undefined);
  }
}

/** A power of two, so that a shard is picked with a mask. */
function shardCount(maxKeys: number): number {
  let count = 1;
  while (count * KEYS_PER_SHARD < maxKeys) count *= 2;
  return count;
}

/** FNV-1a over the tag's characters: tags are short (22-character hashes), and any string spreads evenly. */
function shardHash(tag: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < tag.length; i++) hash = Math.imul(hash ^ tag.charCodeAt(i), 0x01000193);
  return hash ^ (hash >>> 16);
}
