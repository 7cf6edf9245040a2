import { addPages, PAGE_SIZE, pageBits } from './pages.js';
import { NONE as LIST_END } from './segmentedLru.js';

const { BITS, MASK } = pageBits();
// Read once: under a loader that turns imports into getters (tsx), an imported constant costs a call per use.
const NONE: number = LIST_END;

/**
 * Most tags one Map of the index holds on average. V8 rebuilds a whole Map at once when it grows, and
 * again when deletions leave it full of holes or a quarter used: at about 0.2 µs an entry, a million-entry
 * Map stalled the event loop for 100-300 ms. Maps of a few thousand entries rebuild in well under 1 ms.
 */
export const KEYS_PER_SHARD = 4096;

/**
 * PAGE_SIZE slots: the counter each holds, its rule and tag side by side in `ids` (a lookup checks both in one
 * cache line), and the next slot holding the same tag.
 */
interface IdentityPage {
  readonly ids: (string | undefined)[];
  readonly next: Int32Array;
}

/** A slot's fields in `ids`: its rule, then its tag. */
const RULE = 0;
const TAG = 1;
const IDS = 2;

/** Where slot `slot`'s field `field` (RULE, TAG) sits in its page's `ids`. */
const idAt = (slot: number, field: number): number => IDS * (slot & MASK) + field;

function identityPage(): IdentityPage {
  // Grown as slots are taken (in order, so it stays packed): a small store stays small.
  return { ids: [], next: new Int32Array(PAGE_SIZE) };
}

/**
 * Counter identity (rule, tag) -> slot number. Tags are spread over small Maps by a hash of the tag, as many
 * as there are tags to hold (about {@link KEYS_PER_SHARD} each): when the tags outgrow them, one Map is
 * split in two (linear hashing), never all at once, so growing costs one small Map's worth of work at most,
 * and a small store keeps one Map (few Maps stay in the CPU cache). Rules keyed on the same descriptors share
 * a tag: a Map holds the first slot of the tag, and the slots of other rules with that tag follow in a
 * chain through `next` (one per such rule), so a lookup reads one Map, as one Map per rule did.
 */
export class SlotIndex {
  #shards: Map<string, number>[] = [new Map()];
  /** Linear hashing: 2^level Maps, plus those split off the first `#split` of them in this round. */
  #level = 0;
  #split = 0;
  #tags = 0;
  #pages: IdentityPage[] = [];

  /** The slot of a counter, or NONE. */
  find(rule: string, tag: string): number {
    let slot = this.#shardOf(tag).get(tag) ?? NONE;
    while (slot !== NONE) {
      const page = this.#page(slot);
      if (page.ids[idAt(slot, RULE)] === rule) return slot;
      slot = page.next[slot & MASK]!;
    }
    return NONE;
  }

  /**
   * The slot of a counter, looked for from `near` (a slot that held its tag when last seen) along the tag's
   * chain, with no Map lookup; NONE when `near` no longer holds the tag or the chain from it has no such
   * counter (it may still be earlier in the chain: ask `find`).
   */
  findNear(near: number, rule: string, tag: string): number {
    if (near < 0 || near >= this.#pages.length << BITS) return NONE;
    let page = this.#page(near);
    if (page.ids[idAt(near, TAG)] !== tag) return NONE;
    let slot = near;
    // Every slot of a chain holds the same tag: from one that holds it, the chain is the tag's.
    while (page.ids[idAt(slot, RULE)] !== rule) {
      slot = page.next[slot & MASK]!;
      if (slot === NONE) return NONE;
      page = this.#page(slot);
    }
    return slot;
  }

  /** Whether `slot` holds this counter. */
  holds(slot: number, rule: string, tag: string): boolean {
    const page = this.#page(slot);
    return page.ids[idAt(slot, RULE)] === rule && page.ids[idAt(slot, TAG)] === tag;
  }

  /** Records that `slot` (a free one, below the count given to `grow`) holds the counter. */
  add(rule: string, tag: string, slot: number): void {
    const shard = this.#shardOf(tag);
    const page = this.#page(slot);
    const at = slot & MASK;
    const first = shard.get(tag);
    page.ids[idAt(slot, RULE)] = rule;
    page.ids[idAt(slot, TAG)] = tag;
    page.next[at] = first ?? NONE;
    shard.set(tag, slot);
    if (first === undefined && ++this.#tags > this.#shards.length * KEYS_PER_SHARD) this.#splitOne();
  }

  /** Forgets the counter a slot holds. */
  remove(slot: number): void {
    const page = this.#page(slot);
    const at = slot & MASK;
    const tag = page.ids[idAt(slot, TAG)]!;
    const shard = this.#shardOf(tag);
    const next = page.next[at]!;
    const first = shard.get(tag)!;
    if (first === slot) {
      if (next !== NONE) shard.set(tag, next);
      else if (shard.delete(tag)) this.#tags--;
    } else {
      let before = first;
      while (this.#page(before).next[before & MASK] !== slot)
        before = this.#page(before).next[before & MASK]!;
      this.#page(before).next[before & MASK] = next;
    }
    page.ids[idAt(slot, RULE)] = undefined;
    page.ids[idAt(slot, TAG)] = undefined;
  }

  /** Makes room for slots numbered below `count`. */
  grow(count: number): void {
    addPages(this.#pages, count, identityPage);
  }

  /** Tags in the fullest Map, what one rebuild by V8 would cost, and the number of Maps (for tests). */
  shards(): { largest: number; count: number } {
    let largest = 0;
    for (const shard of this.#shards) largest = Math.max(largest, shard.size);
    return { largest, count: this.#shards.length };
  }

  /** Forgets every counter. */
  clear(): void {
    this.#shards = [new Map()];
    this.#level = this.#split = this.#tags = 0;
    this.#pages = [];
  }

  #shardOf(tag: string): Map<string, number> {
    if (this.#shards.length === 1) return this.#shards[0]!; // a small store: nothing to hash
    const hash = shardHash(tag);
    const index = hash & ((1 << this.#level) - 1);
    return this.#shards[index < this.#split ? hash & ((2 << this.#level) - 1) : index]!;
  }

  /** Splits the next Map of the round in two: its tags that hash to the new Map move there. */
  #splitOne(): void {
    const from = this.#shards[this.#split]!;
    const to = new Map<string, number>();
    this.#shards.push(to);
    const mask = (2 << this.#level) - 1;
    for (const [tag, slot] of from) {
      if ((shardHash(tag) & mask) === this.#split) continue;
      to.set(tag, slot);
      from.delete(tag);
    }
    if (++this.#split === 1 << this.#level) {
      this.#level++;
      this.#split = 0;
    }
  }

  #page(slot: number): IdentityPage {
    return this.#pages[slot >>> BITS]!;
  }
}

/** Characters of a tag's end that choose its Map. */
export const HASHED_CHARS = 8;

/**
 * FNV-1a over the tag's last {@link HASHED_CHARS} characters and its length. Hashing the whole tag was more
 * than a Map lookup per check; the engine's tags are random hashes (a sharded counter's too: `<hash>-<n>`),
 * and the end is where made-up tags vary too (`key-1`, `key-2`), so their ends spread as evenly.
 */
function shardHash(tag: string): number {
  let hash = Math.imul(0x811c9dc5 ^ tag.length, 0x01000193);
  for (let i = Math.max(0, tag.length - HASHED_CHARS); i < tag.length; i++)
    hash = Math.imul(hash ^ tag.charCodeAt(i), 0x01000193);
  return hash ^ (hash >>> 16);
}
