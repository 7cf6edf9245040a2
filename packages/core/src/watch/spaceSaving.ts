/**
 * Space-Saving (Metwally, Agrawal, El Abbadi 2005): the heaviest keys of a stream in fixed memory, O(1) per
 * key seen. `capacity` counters; a key without one takes over the smallest counter, inheriting its count as
 * its possible error. Guarantees, with N the keys offered and k the capacity:
 * - a counted key's count is never below its true count, and over it by at most its `error` <= `floor` <= N/k;
 * - a key not counted was seen at most `floor` times, so every key seen more than N/k times is counted;
 * - the counts add up to N exactly (each offer adds one to one counter).
 * Counters sit in buckets of equal count, linked in increasing order (the "stream summary"), so adding one
 * moves a counter to the next bucket or bumps its own: no search, no sort.
 */

/** A key as the sketch reports it: its count (an upper bound) and how much of it may be another key's. */
export interface SketchEntry {
  readonly tag: string;
  readonly count: number;
  readonly error: number;
}

class Bucket {
  count = 0;
  /** First counter of this count; its siblings follow through `next`. */
  head: Counter | undefined;
  lower: Bucket | undefined;
  higher: Bucket | undefined;
}

class Counter {
  tag: string;
  hash: number;
  error: number;
  bucket: Bucket;
  prev: Counter | undefined;
  next: Counter | undefined;

  constructor(tag: string, hash: number, error: number, bucket: Bucket) {
    this.tag = tag;
    this.hash = hash;
    this.error = error;
    this.bucket = bucket;
  }
}

/**
 * Tag -> counter, by open addressing with linear probing over a table four times the counters. A Map would do,
 * but a key turned out costs it a deletion read off the old tag, a string not seen for a while (a cache miss);
 * here each counter keeps its tag's hash, so turning a key out reads no tag, and a probe compares hashes before
 * strings. Tags are hashes already: a few of their characters, mixed, make the hash.
 */
class TagTable {
  readonly #slots: (Counter | undefined)[];
  readonly #mask: number;
  readonly #shift: number;
  size = 0;

  constructor(capacity: number) {
    let bits = 4;
    while (1 << bits < capacity * 4) bits++;
    this.#slots = new Array(1 << bits).fill(undefined);
    this.#mask = (1 << bits) - 1;
    this.#shift = 32 - bits;
  }

  get(tag: string, hash: number): Counter | undefined {
    const slots = this.#slots;
    for (let i = hash >>> this.#shift; ; i = (i + 1) & this.#mask) {
      const counter = slots[i];
      if (counter === undefined || (counter.hash === hash && counter.tag === tag)) return counter;
    }
  }

  /** Places a counter whose tag is not in the table. */
  add(counter: Counter): void {
    const slots = this.#slots;
    let i = counter.hash >>> this.#shift;
    while (slots[i] !== undefined) i = (i + 1) & this.#mask;
    slots[i] = counter;
    this.size++;
  }

  /** Takes a counter out, moving back the ones after it that its slot had pushed along. */
  delete(counter: Counter): void {
    const slots = this.#slots;
    const mask = this.#mask;
    let hole = counter.hash >>> this.#shift;
    while (slots[hole] !== counter) hole = (hole + 1) & mask;
    for (let i = (hole + 1) & mask; slots[i] !== undefined; i = (i + 1) & mask) {
      const home = slots[i]!.hash >>> this.#shift;
      // Moves back unless its home lies cyclically in (hole, i]: then it is as close to it as it can be.
      if (hole <= i ? home <= hole || home > i : home <= hole && home > i) {
        slots[hole] = slots[i];
        hole = i;
      }
    }
    slots[hole] = undefined;
    this.size--;
  }

  clear(): void {
    this.#slots.fill(undefined);
    this.size = 0;
  }
}

/** A tag's hash: its first characters and its last (a shard's number), mixed; 0 to 2^32 - 1. */
function hashOf(tag: string): number {
  const mixed =
    tag.charCodeAt(0) ^
    (tag.charCodeAt(1) << 7) ^
    (tag.charCodeAt(2) << 14) ^
    (tag.charCodeAt(3) << 21) ^
    (tag.charCodeAt(4) << 25) ^
    (tag.charCodeAt(tag.length - 1) << 11) ^
    tag.length;
  return Math.imul(mixed, 0x9e3779b1) >>> 0;
}

export class SpaceSaving {
  readonly capacity: number;
  readonly #counters: TagTable;
  /** The bucket of the lowest count: where a new key takes its counter once all are taken. */
  #lowest: Bucket | undefined;
  /** Emptied buckets, reused: a busy sketch allocates nothing. */
  #spare: Bucket | undefined;
  #total = 0;
  /** Whether a key was ever turned out of its counter (until then every count is exact). */
  #turnedOut = false;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.#counters = new TagTable(capacity);
  }

  /** Keys offered since the sketch was made or cleared (N). */
  get total(): number {
    return this.#total;
  }

  /** Keys counted now (at most `capacity`). */
  get size(): number {
    return this.#counters.size;
  }

  /**
   * The most a key not counted can have been seen, and the most any count can be over: 0 while no key was
   * ever turned out (every count exact), else the lowest count, which is at most N/k.
   */
  get floor(): number {
    return this.#turnedOut ? (this.#lowest?.count ?? 0) : 0;
  }

  /** Counts one more of `tag`. */
  offer(tag: string): void {
    this.#total++;
    const hash = hashOf(tag);
    const counter = this.#counters.get(tag, hash);
    if (counter !== undefined) {
      this.#increment(counter);
      return;
    }
    if (this.#counters.size < this.capacity) {
      this.#addNew(tag, hash);
      return;
    }
    // Full: the new key takes a counter of the lowest count, which becomes its possible error.
    const lowest = this.#lowest!;
    const taken = lowest.head!;
    this.#turnedOut = true;
    this.#counters.delete(taken);
    taken.tag = tag;
    taken.hash = hash;
    taken.error = lowest.count;
    this.#counters.add(taken);
    this.#increment(taken);
  }

  /** The counted keys, highest count first (ties: smaller error first). */
  entries(): SketchEntry[] {
    const out: SketchEntry[] = [];
    for (let bucket = this.#lowest; bucket !== undefined; bucket = bucket.higher)
      for (let c = bucket.head; c !== undefined; c = c.next)
        out.push({ tag: c.tag, count: bucket.count, error: c.error });
    return out.sort((a, b) => b.count - a.count || a.error - b.error);
  }

  /** Starts afresh: no key, N = 0. */
  clear(): void {
    this.#counters.clear();
    this.#lowest = undefined;
    this.#spare = undefined;
    this.#total = 0;
    this.#turnedOut = false;
  }

  #addNew(tag: string, hash: number): void {
    const lowest = this.#lowest;
    let bucket: Bucket;
    if (lowest !== undefined && lowest.count === 1) bucket = lowest;
    else {
      bucket = this.#bucket(1);
      bucket.higher = lowest;
      if (lowest !== undefined) lowest.lower = bucket;
      this.#lowest = bucket;
    }
    const counter = new Counter(tag, hash, 0, bucket);
    this.#attach(counter, bucket);
    this.#counters.add(counter);
  }

  #increment(counter: Counter): void {
    const from = counter.bucket;
    const count = from.count + 1;
    const higher = from.higher;
    const alone = counter.prev === undefined && counter.next === undefined;
    // The usual case of a hot key: alone in its bucket, and no other key one above it.
    if (alone && (higher === undefined || higher.count !== count)) {
      from.count = count;
      return;
    }
    this.#detach(counter, from);
    let to: Bucket;
    if (higher !== undefined && higher.count === count) to = higher;
    else {
      to = this.#bucket(count);
      to.lower = from;
      to.higher = higher;
      from.higher = to;
      if (higher !== undefined) higher.lower = to;
    }
    this.#attach(counter, to);
    if (from.head === undefined) this.#unlink(from);
  }

  #attach(counter: Counter, bucket: Bucket): void {
    counter.bucket = bucket;
    counter.prev = undefined;
    counter.next = bucket.head;
    if (bucket.head !== undefined) bucket.head.prev = counter;
    bucket.head = counter;
  }

  #detach(counter: Counter, bucket: Bucket): void {
    if (counter.prev !== undefined) counter.prev.next = counter.next;
    else bucket.head = counter.next;
    if (counter.next !== undefined) counter.next.prev = counter.prev;
  }

  /** Takes an empty bucket out of the chain and keeps it for reuse. */
  #unlink(bucket: Bucket): void {
    if (bucket.lower !== undefined) bucket.lower.higher = bucket.higher;
    else this.#lowest = bucket.higher;
    if (bucket.higher !== undefined) bucket.higher.lower = bucket.lower;
    bucket.lower = undefined;
    bucket.higher = this.#spare;
    this.#spare = bucket;
  }

  #bucket(count: number): Bucket {
    const spare = this.#spare;
    const bucket = spare ?? new Bucket();
    if (spare !== undefined) this.#spare = spare.higher;
    bucket.count = count;
    bucket.head = undefined;
    bucket.lower = undefined;
    bucket.higher = undefined;
    return bucket;
  }
}
