import { type AddressBits, bitAt } from '../net/address.js';

/**
 * A binary tree over address bits (one root for IPv4, one for IPv6). A lookup walks at most 32 or 128 steps,
 * whatever the number of ranges, collecting the values of every range on the way that holds the address.
 * Nodes live in flat arrays of small integers: 100,000 ranges stay a few compact arrays, not a million objects.
 */
export class PrefixTree<T> {
  /** Child on a 0 bit / on a 1 bit, by node; 0 is "none" (the roots, 0 and 1, are nobody's child). */
  readonly #zero: number[] = [0, 0];
  readonly #one: number[] = [0, 0];
  readonly #values: (T[] | undefined)[] = [undefined, undefined];
  #ranges = 0;

  /** Number of ranges added. */
  get size(): number {
    return this.#ranges;
  }

  /** Adds a range with a value reported by lookups of every address inside it. */
  add(range: AddressBits, value: T): void {
    let node = range.v6 ? 1 : 0;
    for (let i = 0; i < range.bits; i++) {
      const branch = bitAt(range.words, i) === 1 ? this.#one : this.#zero;
      let next = branch[node] ?? 0;
      if (next === 0) {
        next = this.#zero.length;
        this.#zero.push(0);
        this.#one.push(0);
        this.#values.push(undefined);
        branch[node] = next;
      }
      node = next;
    }
    const values = this.#values[node];
    if (values === undefined) this.#values[node] = [value];
    else values.push(value);
    this.#ranges++;
  }

  /** True when some range holds the address (within the bits the address knows). */
  has(address: AddressBits): boolean {
    let node = address.v6 ? 1 : 0;
    for (let i = 0; ; i++) {
      if (this.#values[node] !== undefined) return true;
      if (i >= address.bits) return false;
      node = (bitAt(address.words, i) === 1 ? this.#one : this.#zero)[node] ?? 0;
      if (node === 0) return false;
    }
  }

  /** Appends the values of every range holding the address, shortest range first. */
  collect(address: AddressBits, into: T[]): void {
    let node = address.v6 ? 1 : 0;
    for (let i = 0; ; i++) {
      const values = this.#values[node];
      if (values !== undefined) for (const value of values) into.push(value);
      if (i >= address.bits) return;
      node = (bitAt(address.words, i) === 1 ? this.#one : this.#zero)[node] ?? 0;
      if (node === 0) return;
    }
  }
}
