/**
 * envoyproxy/ratelimit's config YAML (`domain`, nested `descriptors`) as Sluice rules. Each node with a
 * `rate_limit` becomes one rule that matches the descriptors of exactly its key path (through the
 * `envoy_path` descriptor the service adds) and its values, counted in a fixed window as Envoy's service does,
 * each domain's apart (keyed by the `envoy_domain` descriptor the service adds, as Envoy's cache key starts with it).
 */

import { compileRules, type RuleProblem, type RuleSpec, RulesError } from '@sluice/core';
import type { CompiledRules } from '@sluice/core/store';
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, type YAMLMap } from 'yaml';

/** The descriptor naming an Envoy descriptor's keys in order (`a/b`): what makes a rule match one depth only. */
export const ENVOY_PATH = 'envoy_path';

/**
 * The descriptor holding the request's domain: the first key of every converted rule, so that two domains' configs
 * on one store never share a counter (envoyproxy/ratelimit's cache key starts with the domain).
 */
export const ENVOY_DOMAIN = 'envoy_domain';

/** An Envoy config compiled: the rule table and, by rule name, the rules its `replaces` lifts. */
export interface EnvoyRules {
  readonly table: CompiledRules;
  readonly replaces: ReadonlyMap<string, readonly string[]>;
}

const UNITS: Record<string, string> = { second: '1s', minute: '1m', hour: '1h', day: '1d' };
const NODE_FIELDS = ['key', 'value', 'rate_limit', 'descriptors', 'shadow_mode', 'detailed_metric'];
const LIMIT_FIELDS = ['unit', 'requests_per_unit', 'unlimited', 'name', 'replaces'];

/** One level of a rule's path: a key and its value (undefined: any value, each its own counter). */
interface Step {
  readonly key: string;
  readonly value: string | undefined;
}

interface Leaf {
  readonly path: readonly Step[];
  readonly rule: Omit<RuleSpec, 'name'>;
  readonly envoyName: string | undefined;
  readonly replaces: readonly string[];
}

/** True for YAML text in envoyproxy/ratelimit's format (top-level `descriptors`, no `rules`). */
export function isEnvoyConfig(text: string): boolean {
  return /^descriptors\s*:/m.test(text) && !/^rules\s*:/m.test(text);
}

/** Parses and compiles an Envoy config; a RulesError names `source`, line, column and field of each problem. */
export function parseEnvoyConfig(text: string, source = '<envoy config>'): EnvoyRules {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const problems: RuleProblem[] = [];
  const report = (node: Node | null | undefined, path: string, message: string) => {
    const { line, col } = lines.linePos(node?.range?.[0] ?? 0);
    problems.push({ source, line: node?.range ? line : 0, column: node?.range ? col : 0, path, message });
  };
  for (const error of doc.errors) {
    const { line, col } = lines.linePos(error.pos[0]);
    problems.push({ source, line, column: col, path: '', message: `YAML: ${error.message.split('\n')[0]}` });
  }
  if (problems.length > 0) throw new RulesError(problems);
  const root = doc.contents;
  if (!isMap(root))
    throw new RulesError([{ source, line: 1, column: 1, path: '', message: 'expected a map' }]);
  unknownFields(root, ['domain', 'descriptors'], '', report);
  const domain = scalarText(root.get('domain', true) as Node | undefined);
  if (!domain) report(root, 'domain', 'domain is required: the domain Envoy sends');
  const leaves: Leaf[] = [];
  walk(root.get('descriptors', true) as Node | undefined, [], 'descriptors', leaves, report);
  if (problems.length > 0) throw new RulesError(problems);
  const rules = nameRules(leaves);
  const table = compileRules({ domain: domain ?? 'default', rules: rules.map((r) => r.spec) }, { source });
  return { table, replaces: replacesByRule(rules) };
}

type Report = (node: Node | null | undefined, path: string, message: string) => void;

function walk(
  list: Node | undefined,
  parent: readonly Step[],
  at: string,
  out: Leaf[],
  report: Report,
): void {
  if (list === undefined) return;
  if (!isSeq(list)) {
    report(list, at, 'descriptors must be a list');
    return;
  }
  for (const [index, item] of list.items.entries()) {
    const path = `${at}[${index}]`;
    if (!isMap(item)) {
      report(item as Node, path, 'a descriptor must be a map');
      continue;
    }
    unknownFields(item, NODE_FIELDS, path, report);
    const key = scalarText(item.get('key', true) as Node | undefined);
    if (!key) {
      report(item, `${path}.key`, 'key is required and must not be empty');
      continue;
    }
    const valueNode = item.get('value', true) as Node | undefined;
    const value = scalarText(valueNode);
    if (value?.endsWith('*'))
      report(valueNode, `${path}.value`, 'a wildcard value ("prefix*") is not supported: list the values');
    const steps = [...parent, { key, value }];
    const limit = item.get('rate_limit', true) as Node | undefined;
    if (limit !== undefined) {
      const leaf = leafOf(limit, steps, `${path}.rate_limit`, report);
      if (leaf) out.push({ ...leaf, rule: { ...leaf.rule, ...modeOf(item, path, leaf.rule, report) } });
    }
    walk(item.get('descriptors', true) as Node | undefined, steps, `${path}.descriptors`, out, report);
  }
}

function leafOf(node: Node, path: readonly Step[], at: string, report: Report): Leaf | undefined {
  if (!isMap(node)) return void report(node, at, 'rate_limit must be a map');
  unknownFields(node, LIMIT_FIELDS, at, report);
  const envoyName = scalarText(node.get('name', true) as Node | undefined);
  const replaces = replacedNames(node.get('replaces', true) as Node | undefined, `${at}.replaces`, report);
  const base = { envoyName, replaces, path };
  if (node.get('unlimited') === true) {
    if (node.has('requests_per_unit'))
      report(node, `${at}.requests_per_unit`, 'an unlimited rate_limit takes no requests_per_unit');
    return { ...base, rule: { action: 'allow', match: matchOf(path) } as Omit<RuleSpec, 'name'> };
  }
  const unitNode = node.get('unit', true) as Node | undefined;
  const unit = scalarText(unitNode)?.toLowerCase();
  const per = unit === undefined ? undefined : UNITS[unit];
  if (per === undefined)
    return void report(
      unitNode ?? node,
      `${at}.unit`,
      `unit must be one of ${Object.keys(UNITS).join(', ')}`,
    );
  const countNode = node.get('requests_per_unit', true) as Node | undefined;
  const requests = isScalar(countNode) ? countNode.value : undefined;
  if (typeof requests !== 'number' || !Number.isInteger(requests) || requests < 0)
    return void report(
      countNode ?? node,
      `${at}.requests_per_unit`,
      'requests_per_unit must be a whole number',
    );
  // Envoy's `requests_per_unit: 0` refuses every request: a deny rule, which counts nothing.
  if (requests === 0)
    return { ...base, rule: { action: 'deny', match: matchOf(path) } as Omit<RuleSpec, 'name'> };
  const keys = path.filter((step) => step.value === undefined).map((step) => step.key);
  const rule = {
    match: matchOf(path),
    key: [ENVOY_DOMAIN, ...keys],
    limit: { requests, per },
    algorithm: 'fixed_window',
  };
  return { ...base, rule: rule as Omit<RuleSpec, 'name'> };
}

function modeOf(item: YAMLMap, at: string, rule: Omit<RuleSpec, 'name'>, report: Report): Partial<RuleSpec> {
  const shadow = item.get('shadow_mode', true) as Node | undefined;
  if (shadow === undefined) return {};
  if (!isScalar(shadow) || typeof shadow.value !== 'boolean') {
    report(shadow, `${at}.shadow_mode`, 'shadow_mode must be true or false');
    return {};
  }
  // An unlimited descriptor refuses nothing: shadowing it changes nothing, and Sluice's allow rules take no mode.
  if (!shadow.value || (rule as { action?: string }).action === 'allow') return {};
  return { mode: 'shadow' } as Partial<RuleSpec>;
}

function matchOf(path: readonly Step[]): Record<string, string> {
  const match: Record<string, string> = { [ENVOY_PATH]: path.map((step) => step.key).join('/') };
  for (const step of path) if (step.value !== undefined) match[step.key] = step.value;
  return match;
}

function replacedNames(node: Node | undefined, at: string, report: Report): string[] {
  if (node === undefined) return [];
  if (!isSeq(node)) {
    report(node, at, 'replaces must be a list of {name}');
    return [];
  }
  return node.items.flatMap((item, index) => {
    const name = isMap(item) ? scalarText(item.get('name', true) as Node | undefined) : undefined;
    if (name === undefined) report(item as Node, `${at}[${index}].name`, 'each replaces entry needs a name');
    return name === undefined ? [] : [name];
  });
}

function unknownFields(map: YAMLMap, known: readonly string[], at: string, report: Report): void {
  for (const pair of map.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (!known.includes(key))
      report(
        pair.key as Node,
        at ? `${at}.${key}` : key,
        `unknown field; expected one of ${known.join(', ')}`,
      );
  }
}

function scalarText(node: Node | null | undefined): string | undefined {
  if (!isScalar(node) || node.value === null || node.value === undefined) return undefined;
  const text = String(node.value);
  return text === '' ? undefined : text;
}

interface NamedRule {
  readonly spec: RuleSpec;
  readonly leaf: Leaf;
}

/**
 * Rule names from Envoy's `name` or the path (`[a-z0-9_]`, unique), and `overrides` chains: the rules of one
 * key path, in Envoy's precedence (a value before any value, level by level), each overriding the next, so
 * that of the rules that match, the most specific applies, as Envoy's "most specific match" does.
 */
function nameRules(leaves: readonly Leaf[]): NamedRule[] {
  const taken = new Set<string>();
  const named = leaves.map((leaf) => {
    const base = slug(
      leaf.envoyName ?? leaf.path.map((s) => (s.value ? `${s.key}_${s.value}` : s.key)).join('_'),
    );
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
    taken.add(name);
    return { name, leaf };
  });
  const byPath = new Map<string, typeof named>();
  for (const entry of named) {
    const path = entry.leaf.path.map((step) => step.key).join('/');
    byPath.set(path, [...(byPath.get(path) ?? []), entry]);
  }
  const overrides = new Map<string, string>();
  for (const group of byPath.values()) {
    const ordered = [...group].sort((a, b) => precedence(a.leaf.path, b.leaf.path));
    for (let i = 0; i + 1 < ordered.length; i++) overrides.set(ordered[i]!.name, ordered[i + 1]!.name);
  }
  return named.map(({ name, leaf }) => {
    const target = overrides.get(name);
    return { leaf, spec: { name, ...leaf.rule, ...(target ? { overrides: target } : {}) } as RuleSpec };
  });
}

/** Envoy's order: at the first level where two paths differ in having a value, the one with a value first. */
function precedence(a: readonly Step[], b: readonly Step[]): number {
  for (let i = 0; i < a.length; i++) {
    const left = a[i]?.value === undefined ? 1 : 0;
    const right = b[i]?.value === undefined ? 1 : 0;
    if (left !== right) return left - right;
  }
  return 0;
}

function slug(text: string): string {
  const clean =
    text
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'rule';
  return clean.slice(0, 100);
}

function replacesByRule(rules: readonly NamedRule[]): Map<string, string[]> {
  const byEnvoyName = new Map<string, string[]>();
  for (const { spec, leaf } of rules) {
    if (leaf.envoyName)
      byEnvoyName.set(leaf.envoyName, [...(byEnvoyName.get(leaf.envoyName) ?? []), spec.name]);
  }
  const out = new Map<string, string[]>();
  for (const { spec, leaf } of rules) {
    const lifted = leaf.replaces.flatMap((name) => byEnvoyName.get(name) ?? []);
    if (lifted.length > 0) out.set(spec.name, lifted);
  }
  return out;
}
