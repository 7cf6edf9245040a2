import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/*
 * The proof-of-work challenge of the `challenge` stage, stateless on the server: a challenge is a token naming
 * the rule, a hash of the key, the difficulty, when it expires and random bytes, signed with HMAC-SHA256. A
 * client solves it by finding a counter such that SHA-256(token ":" counter) starts with `difficulty` zero
 * bits, and sends `token:counter` back. Verifying is one HMAC and one SHA-256: no state per challenge is kept
 * (a replay marker, short-lived, is the store's part; see RULES.md).
 */

/** The only algorithm so far: leading zero bits of SHA-256. */
export const CHALLENGE_ALGORITHM = 'sha256-leading-zero-bits';

/** What a 429 at the `challenge` stage carries. */
export interface Challenge {
  readonly algorithm: typeof CHALLENGE_ALGORITHM;
  readonly difficulty: number;
  /** Epoch ms after which a solution is refused. */
  readonly expiresAt: number;
  /** The signed token to hash with the counter. */
  readonly token: string;
}

/** Why a solution was refused; `ok` when it is good. */
export type SolutionVerdict =
  | 'ok'
  | 'malformed'
  | 'forged'
  | 'expired'
  | 'wrong_key'
  | 'wrong_rule'
  | 'unsolved';

/** Why a solution was refused, as metrics and the decision log name it (bounded). */
export type SolutionRefusal = Exclude<SolutionVerdict, 'ok'> | 'replayed';

/** The signed fields of a token, in order. */
interface TokenFields {
  readonly rule: string;
  readonly keyHash: string;
  readonly difficulty: number;
  readonly expiresAt: number;
  readonly nonce: string;
}

/** Token format version: a later format is refused as malformed, never misread. */
const VERSION = 'c1';

/**
 * A challenge for `keyHash` (the key's tag: the key in clear never enters it) under `rule`, valid `ttlMs` from
 * `now`. `difficulty` is clamped to 1..32 bits.
 */
export function issueChallenge(
  secret: string,
  rule: string,
  keyHash: string,
  difficulty: number,
  now: number,
  ttlMs: number,
): Challenge {
  const bits = Math.min(32, Math.max(1, Math.round(difficulty)));
  const fields: TokenFields = {
    rule: Buffer.from(rule).toString('base64url'),
    keyHash,
    difficulty: bits,
    expiresAt: now + ttlMs,
    nonce: randomBytes(12).toString('base64url'),
  };
  const body = [VERSION, fields.rule, fields.keyHash, bits, fields.expiresAt, fields.nonce].join('.');
  return {
    algorithm: CHALLENGE_ALGORITHM,
    difficulty: bits,
    expiresAt: fields.expiresAt,
    token: `${body}.${sign(secret, body)}`,
  };
}

function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('base64url');
}

/** The token's fields when its signature is the server's; undefined when malformed, 'forged' when not. */
function readToken(secret: string, token: string): TokenFields | 'malformed' | 'forged' {
  const parts = token.split('.');
  if (parts.length !== 7 || parts[0] !== VERSION) return 'malformed';
  const [, rule = '', keyHash = '', bits = '', expires = '', nonce = '', signature = ''] = parts;
  const expected = Buffer.from(sign(secret, parts.slice(0, 6).join('.')));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forged';
  return { rule, keyHash, difficulty: Number(bits), expiresAt: Number(expires), nonce };
}

/**
 * Checks a solution (`token:counter`, as the solution header carries it) for this key and rule at `now`: the
 * signature first (so a forged token costs no hashing), then expiry, key, rule and the work.
 */
export function verifySolution(
  secret: string,
  solution: string,
  rule: string,
  keyHash: string,
  now: number,
): SolutionVerdict {
  const read = readSolution(secret, solution);
  if (typeof read === 'string') return read;
  const { token, counter, fields } = read;
  if (!(now <= fields.expiresAt)) return 'expired';
  if (fields.keyHash !== keyHash) return 'wrong_key';
  if (fields.rule !== Buffer.from(rule).toString('base64url')) return 'wrong_rule';
  return leadingZeroBits(workHash(token, counter)) >= fields.difficulty ? 'ok' : 'unsolved';
}

/** A solution's parts, its token's signature checked; 'malformed' or 'forged' when it is no solution of this server's. */
function readSolution(
  secret: string,
  solution: string,
): { token: string; counter: string; fields: TokenFields } | 'malformed' | 'forged' {
  const colon = solution.lastIndexOf(':');
  if (colon <= 0 || solution.length > 512) return 'malformed';
  const token = solution.slice(0, colon);
  const counter = solution.slice(colon + 1);
  if (!/^\d{1,16}$/.test(counter)) return 'malformed';
  const fields = readToken(secret, token);
  return typeof fields === 'string' ? fields : { token, counter, fields };
}

/**
 * Why a solution naming no challenge rule of the check is refused: `malformed` (not `token:counter`, or a token
 * of no known shape) or `forged` (not signed with this secret). Undefined for one this server signed: its rule is
 * another check's (a route's, seen by the global check) and that check redeems it.
 */
export function strayFault(secret: string, solution: string): 'malformed' | 'forged' | undefined {
  const read = readSolution(secret, solution);
  return typeof read === 'string' ? read : undefined;
}

/** The hash a solution's work is judged by. */
export function workHash(token: string, counter: string | number): Buffer {
  return createHash('sha256').update(`${token}:${counter}`).digest();
}

/** Zero bits at the start of a digest. */
export function leadingZeroBits(digest: Uint8Array): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

/** The rule a token names (unverified: for finding the rule whose secret judges it); undefined when malformed. */
export function tokenRule(token: string): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 7 || parts[0] !== VERSION) return undefined;
  return Buffer.from(parts[1] ?? '', 'base64url').toString();
}

/** The token's random part: what its replay marker and the pass it earns are keyed by (hashed again there). */
export function tokenNonce(token: string): string {
  return token.split('.')[5] ?? '';
}

/** Solves a challenge by brute force (what @sluice/client and the challenge page do): the solution string. */
export function solveChallenge(challenge: Pick<Challenge, 'token' | 'difficulty'>): string {
  for (let counter = 0; ; counter++)
    if (leadingZeroBits(workHash(challenge.token, counter)) >= challenge.difficulty)
      return `${challenge.token}:${counter}`;
}

/** The difficulty for a key's violations: the rule's first, one bit more for each violation after `after`. */
export function difficultyFor(base: number, after: number, violations: number): number {
  return Math.min(32, base + Math.max(0, violations - after));
}
