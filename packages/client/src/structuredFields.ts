/** A bare item of a structured field (RFC 8941): string, token, number or boolean. */
export type BareItem = string | number | boolean;

/** One member of a structured-field list, with its parameters. */
export interface ListItem {
  readonly value: BareItem;
  /** True when the value was a quoted string (a `"name"`), false for a token. */
  readonly quoted: boolean;
  readonly params: ReadonlyMap<string, BareItem>;
}

/** Reads a structured-field list such as `"burst";r=0;t=3, "daily";r=90;t=3600`; undefined when malformed. */
export function parseList(text: string): ListItem[] | undefined {
  const reader = new Reader(text);
  const items: ListItem[] = [];
  reader.skipSpaces();
  while (!reader.done) {
    const item = reader.item();
    if (item === undefined) return undefined;
    items.push(item);
    reader.skipSpaces();
    if (reader.done) break;
    if (!reader.take(',')) return undefined;
    reader.skipSpaces();
    if (reader.done) return undefined; // a trailing comma
  }
  return items;
}

const TOKEN_START = /[A-Za-z*]/;
const TOKEN_CHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/;
const KEY_START = /[a-z*]/;
const KEY_CHAR = /[a-z0-9_\-.*]/;
const NUMBER = /^-?\d{1,15}(\.\d{1,3})?/;

/** A cursor over header text; each method returns undefined on malformed input. */
class Reader {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  get done(): boolean {
    return this.#at >= this.#text.length;
  }

  skipSpaces(): void {
    while (this.#text[this.#at] === ' ' || this.#text[this.#at] === '\t') this.#at += 1;
  }

  take(char: string): boolean {
    if (this.#text[this.#at] !== char) return false;
    this.#at += 1;
    return true;
  }

  item(): ListItem | undefined {
    const quoted = this.#text[this.#at] === '"';
    const value = this.bareItem();
    if (value === undefined) return undefined;
    const params = new Map<string, BareItem>();
    while (this.take(';')) {
      this.skipSpaces();
      const key = this.key();
      if (key === undefined) return undefined;
      const param = this.take('=') ? this.bareItem() : true;
      if (param === undefined) return undefined;
      params.set(key, param);
    }
    return { value, quoted, params };
  }

  bareItem(): BareItem | undefined {
    const char = this.#text[this.#at];
    if (char === undefined) return undefined;
    if (char === '"') return this.string();
    if (char === '?') return this.boolean();
    if (char === '-' || (char >= '0' && char <= '9')) return this.number();
    return TOKEN_START.test(char) ? this.run(TOKEN_CHAR) : undefined;
  }

  key(): string | undefined {
    const char = this.#text[this.#at];
    return char !== undefined && KEY_START.test(char) ? this.run(KEY_CHAR) : undefined;
  }

  run(chars: RegExp): string {
    const start = this.#at;
    while (this.#at < this.#text.length && chars.test(this.#text[this.#at]!)) this.#at += 1;
    return this.#text.slice(start, this.#at);
  }

  string(): string | undefined {
    let out = '';
    for (this.#at += 1; this.#at < this.#text.length; this.#at += 1) {
      const char = this.#text[this.#at]!;
      if (char === '"') {
        this.#at += 1;
        return out;
      }
      if (char === '\\') {
        this.#at += 1;
        const escaped = this.#text[this.#at];
        if (escaped !== '"' && escaped !== '\\') return undefined;
        out += escaped;
      } else out += char;
    }
    return undefined; // unterminated
  }

  boolean(): boolean | undefined {
    const value = this.#text.slice(this.#at, this.#at + 2);
    if (value !== '?0' && value !== '?1') return undefined;
    this.#at += 2;
    return value === '?1';
  }

  number(): number | undefined {
    const match = NUMBER.exec(this.#text.slice(this.#at));
    if (match === null) return undefined;
    this.#at += match[0].length;
    return Number(match[0]);
  }
}
