/**
 * The board's store capability: the latest board of each gateway (its heavy hitters and rates, as text the
 * store does not read), kept for a while after its last publish, so that any reader sees the live fleet. A
 * gateway that stops publishing drops off by itself. MemoryStore keeps it in process; RedisStore in two keys
 * under one hash tag.
 */

/** The store capability. Each call is one store call; `now` is the caller's clock, epoch ms. */
export interface Board {
  /** Keeps `text` as `gateway`'s board until `now + ttlMs`, replacing its last one. */
  publish(gateway: string, text: string, ttlMs: number, now: number): Promise<void>;
  /** The boards of every gateway that published within its TTL, in no particular order. */
  read(now: number): Promise<string[]>;
}

/** Boards a MemoryStore keeps at most (a bound against gateway names made up per call). */
const MAX_GATEWAYS = 1000;

/** The board in process: one Map, each entry with its expiry, expired ones dropped as they are met. */
export class MemoryBoard implements Board {
  readonly #boards = new Map<string, { readonly text: string; readonly until: number }>();

  publish(gateway: string, text: string, ttlMs: number, now: number): Promise<void> {
    this.#drop(now);
    if (this.#boards.size < MAX_GATEWAYS || this.#boards.has(gateway))
      this.#boards.set(gateway, { text, until: now + ttlMs });
    return Promise.resolve();
  }

  read(now: number): Promise<string[]> {
    this.#drop(now);
    return Promise.resolve([...this.#boards.values()].map((board) => board.text));
  }

  #drop(now: number): void {
    for (const [gateway, board] of this.#boards) if (board.until <= now) this.#boards.delete(gateway);
  }
}
