import { createHash, createHmac } from 'node:crypto';
import type { CompiledRule, Descriptors } from './types.js';

const TAG_LENGTH = 22; // 132 bits of base64url: collisions are not a practical concern

/** Hashes text to a short base64url string; keyed (HMAC) when a secret is given. */
export function hashText(text: string, secret?: string): string {
  const hash = secret ? createHmac('sha256', secret) : createHash('sha256');
  return hash.update(text).digest('base64url').slice(0, TAG_LENGTH);
}

/**
 * The counter tag of a rule for a request: a hash of the rule's key descriptor names and values, so raw
 * values (API keys, IPs, arbitrary user input) never reach a store key and cannot collide or break a
 * Redis hash tag. Rules keyed on the same descriptors share a tag (and so a Redis Cluster slot).
 * Returns undefined when a key descriptor is missing: the rule has nothing to count on.
 */
export function tagFor(rule: CompiledRule, descriptors: Descriptors, secret?: string): string | undefined {
  if (rule.global) return hashText(`global:${rule.name}`, secret);
  const parts: string[] = [];
  for (const name of rule.key) {
    const value = descriptors[name];
    if (value === undefined) return undefined;
    parts.push(name, value);
  }
  // JSON encoding keeps ['a:b'] and ['a', 'b'] apart.
  return hashText(JSON.stringify(parts), secret);
}

/** A stable percentage bucket (0-99.99) for rollout, from a tag. */
export function rolloutBucket(tag: string): number {
  const digest = createHash('sha256').update(tag).digest();
  return (digest.readUInt32BE(0) % 10_000) / 100;
}
