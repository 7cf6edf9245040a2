import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * The pass a good solution earns: a signed token naming the rule, the key's hash, the pass's id (the solved
 * challenge's nonce) and when it ends, sent back in `Sluice-Pass` (and, for browsers, a cookie). Like the
 * challenge, it keeps no state on the server; its budget of requests is a counter in the store, keyed by its id.
 */

/** Pass format version: a later format is ignored, never misread. */
const VERSION = 'p1';

/** The fields of a pass whose signature is the server's. */
export interface PassFields {
  readonly rule: string;
  readonly keyHash: string;
  readonly id: string;
  /** Epoch ms when it ends. */
  readonly until: number;
}

/** A pass token for `keyHash` under `rule`, good until `until`. */
export function issuePass(secret: string, fields: PassFields): string {
  const body = [
    VERSION,
    Buffer.from(fields.rule).toString('base64url'),
    fields.keyHash,
    fields.id,
    fields.until,
  ].join('.');
  return `${body}.${sign(secret, body)}`;
}

function sign(secret: string, body: string): string {
  return createHmac('sha256', `pass:${secret}`).update(body).digest('base64url');
}

/** The rule a pass names, unverified (to find the rule it is for); undefined when malformed. */
export function passRule(pass: string): string | undefined {
  const parts = pass.split('.');
  return parts.length === 6 && parts[0] === VERSION
    ? Buffer.from(parts[1] ?? '', 'base64url').toString()
    : undefined;
}

/** The pass's fields when it is the server's, for this key, and not over at `now`; undefined otherwise. */
export function readPass(secret: string, pass: string, keyHash: string, now: number): PassFields | undefined {
  const parts = pass.split('.');
  if (parts.length !== 6 || parts[0] !== VERSION || pass.length > 512) return undefined;
  const [, rule = '', hash = '', id = '', until = '', signature = ''] = parts;
  const expected = Buffer.from(sign(secret, parts.slice(0, 5).join('.')));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const ends = Number(until);
  if (hash !== keyHash || !(now <= ends)) return undefined;
  return { rule: Buffer.from(rule, 'base64url').toString(), keyHash: hash, id, until: ends };
}
