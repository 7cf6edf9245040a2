import { descriptorOf } from '../algorithms/index.js';
import { durationMs } from '../base/duration.js';
import type { BanPolicy, CompiledRule } from './contract.js';
import type { FieldPath, Finding } from './findings.js';
import type { ParsedRule } from './schema.js';

/**
 * Meaning of the policy fields: escalate lengthens bans, so it needs one and grows from it; count, penalty and
 * idempotent apply only where a request's units are its own.
 */
export function checkPolicies(rule: ParsedRule, at: FieldPath): Finding[] {
  const found: Finding[] = [];
  if (rule.escalate !== undefined) {
    if (rule.ban === undefined)
      found.push({
        path: [...at, 'escalate'],
        message: 'escalate lengthens bans: add ban: {after, within, for}',
      });
    else found.push(...checkGrowing(rule.ban.for, rule.escalate, [...at, 'escalate']));
  }
  if (rule.count !== undefined && descriptorOf(rule.algorithm).release === 'lease') {
    found.push({
      path: [...at, 'count'],
      message: `a ${rule.algorithm} rule holds leases, not counts: count does not apply`,
    });
  }
  // A batch is spent in process: no request's charge is its own to give back.
  if (rule.count !== undefined && rule.lease !== undefined) {
    found.push({
      path: [...at, 'count'],
      message: 'count refunds a request its own charge; with lease: {batch} units are spent in process',
    });
  }
  found.push(...checkHoldsLeases(rule, at), ...checkSplitCounters(rule, at), ...checkSettle(rule, at));
  return found;
}

/**
 * A rule whose requests hold leases (concurrency) has no units to charge a denied request, and a retry of
 * its request must take its own lease: penalty and idempotent do not apply.
 */
function checkHoldsLeases(rule: ParsedRule, at: FieldPath): Finding[] {
  if (descriptorOf(rule.algorithm).release !== 'lease') return [];
  const found: Finding[] = [];
  if (rule.penalty !== undefined)
    found.push({
      path: [...at, 'penalty'],
      message: `a ${rule.algorithm} rule holds leases, not counts: penalty does not apply`,
    });
  if (rule.idempotent !== undefined)
    found.push({
      path: [...at, 'idempotent'],
      message: `a ${rule.algorithm} rule holds a lease per request: idempotent does not apply`,
    });
  return found;
}

/**
 * Bans, penalties and idempotency markers live beside one counter of one key. A sharded rule spreads a key
 * over sub-counters and a leased one counts in batches, not requests: neither has that counter.
 */
function checkSplitCounters(rule: ParsedRule, at: FieldPath): Finding[] {
  const split = (rule.shards ?? 1) > 1 ? 'shards' : rule.lease !== undefined ? 'lease' : undefined;
  if (split === undefined) return [];
  return (['ban', 'penalty', 'idempotent'] as const)
    .filter((field) => rule[field] !== undefined)
    .map((field) => ({
      path: [...at, field],
      message: `${field} needs one counter per key: it does not apply with ${split}`,
    }));
}

/**
 * A settled rule's estimate is charged to one counter of one key and settled there, from the request's own
 * charge: not with leases (no units), nor shards or batches (no one counter), nor `count` (one give-back only).
 */
function checkSettle(rule: ParsedRule, at: FieldPath): Finding[] {
  if (rule.settle !== true) return [];
  const clash =
    descriptorOf(rule.algorithm).release === 'lease'
      ? `a ${rule.algorithm} rule holds leases, not counts`
      : (rule.shards ?? 1) > 1
        ? 'shards split the counter'
        : rule.lease !== undefined
          ? 'lease: {batch} spends units in process'
          : rule.count !== undefined
            ? 'count gives the charge back by status: settle gives back the difference'
            : undefined;
  return clash === undefined ? [] : [{ path: [...at, 'settle'], message: `${clash}: settle does not apply` }];
}

/** Each escalation step must be longer than the ban (or step) before it. */
function checkGrowing(first: string, steps: readonly string[], path: FieldPath): Finding[] {
  let previous = first;
  const found: Finding[] = [];
  steps.forEach((step, index) => {
    if ((durationMs(step) ?? 0) <= (durationMs(previous) ?? 0))
      found.push({
        path: [...path, index],
        message: `${step} is not longer than ${previous}: escalated bans grow`,
      });
    previous = step;
  });
  return found;
}

/** The compiled policy fields of a rule; empty when it has none. */
export function compilePolicies(
  rule: ParsedRule,
): Pick<CompiledRule, 'ban' | 'penalty' | 'count' | 'idempotentMs' | 'settle'> {
  return {
    ...(rule.settle === true ? { settle: true } : {}),
    ...(rule.ban === undefined ? {} : { ban: banPolicy(rule.ban, rule.escalate) }),
    ...(rule.penalty === undefined ? {} : { penalty: rule.penalty }),
    ...(rule.idempotent === undefined ? {} : { idempotentMs: durationMs(rule.idempotent) ?? 0 }),
    ...(rule.count === undefined
      ? {}
      : { count: typeof rule.count === 'string' ? rule.count : [...rule.count] }),
  };
}

function banPolicy(ban: NonNullable<ParsedRule['ban']>, escalate: ParsedRule['escalate']): BanPolicy {
  const ms = (text: string) => durationMs(text) ?? 0;
  return {
    after: ban.after,
    withinMs: ms(ban.within),
    forMs: ms(ban.for),
    ...(escalate === undefined ? {} : { escalateMs: escalate.map(ms) }),
  };
}
