import { createHash } from 'node:crypto';
import { parseList } from './structuredFields.js';

/*
 * Sluice's proof-of-work challenge, the client's side: a 429 at a server's challenge stage carries
 * `Sluice-Challenge: "<token>";alg=sha256-leading-zero-bits;difficulty=N;expires=<unix s>`. The client finds a
 * counter such that SHA-256(token ":" counter) starts with N zero bits and sends the request again with
 * `Sluice-Solution: token:counter`; the answer's `Sluice-Pass` is sent on the origin's next requests, which
 * then count nothing against that rule while the pass lasts.
 */

/** Options of the client's challenge solving. */
export interface ChallengeOptions {
  /** Challenges harder than this (leading zero bits) are not solved: the 429 goes back. Default 20. */
  maxDifficulty?: number;
}

export const CHALLENGE_HEADER = 'sluice-challenge';
export const SOLUTION_HEADER = 'sluice-solution';
export const PASS_HEADER = 'sluice-pass';
/** Sent by the server when the pass a request carried is used up or over: the client stops sending it. */
export const PASS_OVER_HEADER = 'sluice-pass-over';
const ALGORITHM = 'sha256-leading-zero-bits';
/** Default of `maxDifficulty`: about a million hashes, one to a few seconds on one core. */
export const DEFAULT_MAX_DIFFICULTY = 20;
/** Hashes between two yields to the event loop while solving. */
const SLICE = 4096;

/** A challenge the client can take. */
export interface SeenChallenge {
  readonly token: string;
  readonly difficulty: number;
}

/** The response's challenge, when it carries one of a known algorithm within `maxDifficulty`; else undefined. */
export function challengeOf(headers: Headers, maxDifficulty: number): SeenChallenge | undefined {
  const text = headers.get(CHALLENGE_HEADER);
  const item = text === null ? undefined : parseList(text)?.[0];
  if (item === undefined || typeof item.value !== 'string' || !item.quoted) return undefined;
  const difficulty = item.params.get('difficulty');
  if (item.params.get('alg') !== ALGORITHM || typeof difficulty !== 'number') return undefined;
  if (!Number.isInteger(difficulty) || difficulty < 1 || difficulty > maxDifficulty) return undefined;
  return { token: item.value, difficulty };
}

function zeroBits(digest: Uint8Array): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte !== 0) return bits + Math.clz32(byte) - 24;
    bits += 8;
  }
  return bits;
}

/** The solution (`token:counter`), found by brute force, yielding to the event loop every few thousand hashes. */
export async function solveChallenge(challenge: SeenChallenge, signal?: AbortSignal): Promise<string> {
  for (let counter = 0; ; counter++) {
    if (counter % SLICE === SLICE - 1) {
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    }
    const digest = createHash('sha256').update(`${challenge.token}:${counter}`).digest();
    if (zeroBits(digest) >= challenge.difficulty) return `${challenge.token}:${counter}`;
  }
}
