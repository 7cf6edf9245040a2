/**
 * How a remote store names a counter's keys, in one place for the store (RedisStore) and for the tools that
 * show them (`sluice explain`): `<prefix>:{<tag>}:<rule>:<suffix>`. The tag, a hash, is the Cluster hash tag,
 * so every key of one counter lands in one slot; a prefix with braces would move it.
 */
export const KEY_PREFIX_RULE = 'must be 1-64 characters without braces or whitespace';

const SAFE_PREFIX = /^[^{}\s]{1,64}$/;

/** Whether a key prefix keeps the key format (see {@link KEY_PREFIX_RULE}). */
export function isKeyPrefix(prefix: string): boolean {
  return SAFE_PREFIX.test(prefix);
}

/** The key of one part (`suffix`) of a rule's counter; `*` as the suffix gives the pattern of all of them. */
export function counterKey(
  prefix: string,
  id: { readonly rule: string; readonly tag: string },
  suffix: string,
): string {
  return `${prefix}:{${id.tag}}:${id.rule}:${suffix}`;
}
