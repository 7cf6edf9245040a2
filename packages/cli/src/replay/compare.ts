import { type CompiledRule, type Decision, decisionOutcome } from '@sluice/core';
import type { CompiledRules } from '@sluice/core/store';
import { keyId, keyLabel } from './keys.js';
import { createReplay, type ReplayOptions } from './replayer.js';
import type { ReplayReport } from './report.js';
import type { ReplayRequest } from './request.js';

/** What one rule did to a request; `unmatched` when the rule did not apply (or is not in that version). */
export type RuleOutcome = 'allowed' | 'denied' | 'would-be' | 'unmatched';

/** How many requests went from one outcome to another. */
export interface Transition {
  readonly from: string;
  readonly to: string;
  readonly count: number;
}

/** One key's changed outcomes under one rule. */
export interface ChangedKey {
  readonly key: string;
  readonly changed: number;
  readonly transitions: readonly Transition[];
}

/** One rule's changed outcomes between the two versions. */
export interface RuleChanges {
  readonly rule: string;
  /** `changed`, `added` (only in the new version) or `removed` (only in the old). */
  readonly status: 'changed' | 'added' | 'removed' | 'same';
  readonly changed: number;
  readonly transitions: readonly Transition[];
  /** Keys with the most changed outcomes (up to `top`). */
  readonly topKeys: readonly ChangedKey[];
}

/** What `sluice replay --compare` prints. */
export interface ComparisonReport {
  readonly old: ReplayReport;
  readonly new: ReplayReport;
  /** Requests whose outcome (allowed, denied, allowed with a would-be denial) changed. */
  readonly changed: number;
  readonly transitions: readonly Transition[];
  readonly rules: readonly RuleChanges[];
}

/** A comparison fed one request at a time. */
export interface Comparison {
  add(request: ReplayRequest): void;
  skip(kind: 'ignored' | 'unreadable'): void;
  finish(): ComparisonReport;
}

type Counts = Map<string, number>;

function bump(counts: Counts, name: string): void {
  counts.set(name, (counts.get(name) ?? 0) + 1);
}

function transitions(counts: Counts): Transition[] {
  return [...counts]
    .map(([name, count]) => {
      const [from = '', to = ''] = name.split('>');
      return { from, to, count };
    })
    .sort((a, b) => b.count - a.count);
}

function total(counts: Counts): number {
  let sum = 0;
  for (const count of counts.values()) sum += count;
  return sum;
}

function requestOutcome(decision: Decision): string {
  const outcome = decisionOutcome(decision);
  return outcome === 'shadow_denied' ? 'would-be' : outcome;
}

function ruleOutcome(decision: Decision, rule: string): RuleOutcome {
  for (const r of decision.results) {
    if (r.rule !== rule) continue;
    if (r.shadowDenied) return 'would-be';
    return r.allowed ? 'allowed' : 'denied';
  }
  return 'unmatched';
}

/** One rule name across both versions: its definition (new one first) and the changes seen. */
interface RuleDiff {
  readonly name: string;
  readonly rule: CompiledRule;
  readonly status: RuleChanges['status'];
  readonly counts: Counts;
  readonly keys: Map<string, Counts>;
}

function ruleDiffs(older: CompiledRules, newer: CompiledRules): RuleDiff[] {
  const oldByName = new Map(older.rules.map((rule) => [rule.name, rule]));
  const newByName = new Map(newer.rules.map((rule) => [rule.name, rule]));
  const names = [...new Set([...newByName.keys(), ...oldByName.keys()])];
  return names.map((name) => {
    const before = oldByName.get(name);
    const after = newByName.get(name);
    const status = !before
      ? 'added'
      : !after
        ? 'removed'
        : JSON.stringify(before) === JSON.stringify(after)
          ? 'same'
          : 'changed';
    return { name, rule: (after ?? before) as CompiledRule, status, counts: new Map(), keys: new Map() };
  });
}

/**
 * Replays the same requests through two rule versions side by side (each on its own counters) and counts the
 * requests whose outcome changes, overall and by rule and key: the effect of a rules pull request.
 */
export function createComparison(
  older: CompiledRules,
  newer: CompiledRules,
  options: ReplayOptions = {},
): Comparison {
  const before = createReplay(older, options);
  const after = createReplay(newer, options);
  const diffs = ruleDiffs(older, newer);
  const overall: Counts = new Map();

  function add(request: ReplayRequest): void {
    const a = before.add(request);
    const b = after.add(request);
    const from = requestOutcome(a);
    const to = requestOutcome(b);
    if (from !== to) bump(overall, `${from}>${to}`);
    for (const diff of diffs) {
      const x = ruleOutcome(a, diff.name);
      const y = ruleOutcome(b, diff.name);
      if (x === y) continue;
      const id = keyId(diff.rule, request.descriptors) ?? '(none)';
      bump(diff.counts, `${x}>${y}`);
      let keyCounts = diff.keys.get(id);
      if (keyCounts === undefined) {
        keyCounts = new Map();
        diff.keys.set(id, keyCounts);
      }
      bump(keyCounts, `${x}>${y}`);
    }
  }

  function finish(): ComparisonReport {
    const top = options.top ?? 20;
    const showKeys = options.showKeys ?? false;
    const rules = diffs.map((diff) => ({
      rule: diff.name,
      status: diff.status,
      changed: total(diff.counts),
      transitions: transitions(diff.counts),
      topKeys: [...diff.keys]
        .map(([id, counts]) => ({
          key: id === '(none)' ? id : keyLabel(diff.rule, id, showKeys, options.keySecret),
          changed: total(counts),
          transitions: transitions(counts),
        }))
        .sort((x, y) => y.changed - x.changed)
        .slice(0, top),
    }));
    return {
      old: before.finish(),
      new: after.finish(),
      changed: total(overall),
      transitions: transitions(overall),
      rules,
    };
  }

  return {
    add,
    skip(kind) {
      before.skip(kind);
      after.skip(kind);
    },
    finish,
  };
}
