import { type CompiledRule, type Descriptors, tagFor } from '@sluice/core';

/**
 * A rule's counter identity for one request, cheap to build on every line: the value itself for a one-descriptor
 * key, JSON of the values for several, `*` for a global rule. Undefined when a key descriptor is missing.
 */
export function keyId(rule: CompiledRule, descriptors: Descriptors): string | undefined {
  if (rule.global) return '*';
  if (rule.key.length === 1) return descriptors[rule.key[0] ?? ''];
  const values: string[] = [];
  for (const name of rule.key) {
    const value = descriptors[name];
    if (value === undefined) return undefined;
    values.push(value);
  }
  return JSON.stringify(values);
}

function valuesOf(rule: CompiledRule, id: string): string[] {
  if (rule.global) return [];
  return rule.key.length === 1 ? [id] : (JSON.parse(id) as string[]);
}

/**
 * How a key is shown: its counter tag (the hash `sluice explain` and decision logs print, keyed with the
 * secret when given), or with `showKeys` the descriptor values in clear (`api_key=k_123`).
 */
export function keyLabel(rule: CompiledRule, id: string, showKeys: boolean, secret?: string): string {
  if (rule.global) return '(global)';
  const values = valuesOf(rule, id);
  if (showKeys) return rule.key.map((name, i) => `${name}=${values[i] ?? ''}`).join(' ');
  const descriptors: Record<string, string> = {};
  for (const [i, name] of rule.key.entries()) descriptors[name] = values[i] ?? '';
  return tagFor(rule, descriptors, secret) ?? '(none)';
}
