import { type AddressBits, looksLikeAddress, parseRange } from '../net/address.js';
import { PrefixTree } from './prefixTree.js';

/**
 * Values a match condition or a list holds: text compared exactly, and IP addresses and CIDR ranges in a
 * prefix tree. Both lookups cost the same with 10 entries or 100,000. Immutable once built.
 */
export class ValueSet {
  readonly #exact: ReadonlySet<string>;
  readonly #ranges: PrefixTree<true>;

  /** Made by a {@link ValueSetBuilder} or {@link valueSetOf}. */
  constructor(exact: ReadonlySet<string>, ranges: PrefixTree<true>) {
    this.#exact = exact;
    this.#ranges = ranges;
  }

  /** Number of entries: texts and ranges. */
  get size(): number {
    return this.#exact.size + this.#ranges.size;
  }

  /** With an address (a client address descriptor): inside one of the ranges; else: one of the texts. */
  has(value: string, address: AddressBits | undefined): boolean {
    return address === undefined ? this.#exact.has(value) : this.#ranges.has(address);
  }
}

/** Collects texts and parsed ranges, then builds the set once: each entry is parsed a single time. */
export class ValueSetBuilder {
  readonly #exact = new Set<string>();
  readonly #ranges = new PrefixTree<true>();

  addText(text: string): void {
    this.#exact.add(text);
  }

  addRange(range: AddressBits): void {
    this.#ranges.add(range, true);
  }

  build(): ValueSet {
    return new ValueSet(this.#exact, this.#ranges);
  }
}

/** The set of entries already validated (a rule's values); an entry that is a bad range throws. */
export function valueSetOf(entries: Iterable<string>): ValueSet {
  const builder = new ValueSetBuilder();
  for (const entry of entries) {
    if (!looksLikeAddress(entry)) {
      builder.addText(entry);
      continue;
    }
    const range = parseRange(entry);
    if (typeof range === 'string') throw new TypeError(range);
    builder.addRange(range);
  }
  return builder.build();
}

/** The set with nothing in it: what a list holds before its first load. */
export const EMPTY_SET = valueSetOf([]);
