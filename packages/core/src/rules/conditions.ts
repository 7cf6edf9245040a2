import type { Lists } from '../lists/contract.js';
import { type ValueSet, valueSetOf } from '../lists/valueSet.js';
import { ADDRESS_FIELDS, type AddressBits, covers, parseAddress, parseRange } from '../net/address.js';
import type { CompiledRule, Descriptors, MatchCondition } from './contract.js';

/** A compiled rule's condition as the matcher checks it: its values built into a set once. */
export interface Condition {
  readonly field: string;
  /** The rule's own values; undefined when the condition reads a list. */
  readonly values: ValueSet | undefined;
  readonly list: string | undefined;
  readonly not: boolean;
  /** An address field: the descriptor is matched by its bits against ranges, never as text. */
  readonly address: boolean;
}

/** Builds a condition's set of values (a prefix tree for address ranges). */
export function toCondition(field: string, condition: MatchCondition): Condition {
  return {
    field,
    values: condition.list === undefined ? valueSetOf(condition.values) : undefined,
    list: condition.list,
    not: condition.not,
    address: ADDRESS_FIELDS.has(field),
  };
}

/**
 * True when every condition holds. A condition on a missing descriptor never holds, negated or not; a list
 * the limiter was not given holds nothing. On an address field a value that is not an address is in no range.
 */
export function conditionsHold(
  conditions: readonly Condition[],
  descriptors: Descriptors,
  lists: Lists | undefined,
): boolean {
  for (const condition of conditions) {
    const value = descriptors[condition.field];
    if (value === undefined) return false;
    let inside = false;
    const address = condition.address ? addressOf(descriptors, condition.field) : undefined;
    if (!condition.address || address !== undefined) {
      const set =
        condition.values ?? (condition.list === undefined ? undefined : lists?.[condition.list]?.current);
      inside = set?.has(value, address) ?? false;
    }
    if (inside === condition.not) return false;
  }
  return true;
}

/**
 * The address bits of an address descriptor. The `ip` descriptor of an IPv6 client is its subnet (/64 by
 * default): when the request also carries `client_ip` (the whole resolved address) inside that subnet, its
 * 128 bits are used, so ranges longer than the subnet can match; otherwise only the subnet's bits are known
 * and such ranges match nothing.
 */
export function addressOf(descriptors: Descriptors, field: string): AddressBits | undefined {
  const text = descriptors[field];
  if (text === undefined) return undefined;
  const address = parseAddress(text);
  if (field !== 'ip' || address === undefined || !address.v6 || address.bits >= 128) return address;
  const whole = descriptors.client_ip;
  const precise = whole === undefined ? undefined : parseAddress(whole);
  return precise !== undefined && covers(address, precise) ? precise : address;
}

/** Ranges a rule can be found by in the matcher's prefix tree. */
export interface IndexableRange {
  readonly field: string;
  readonly ranges: readonly AddressBits[];
}

/** A positive condition of literal ranges on an address field: the rule is found by walking the tree. */
export function indexableRange(rule: CompiledRule): IndexableRange | undefined {
  for (const [field, condition] of Object.entries(rule.conditions ?? {})) {
    if (!ADDRESS_FIELDS.has(field) || condition.not || condition.list !== undefined) continue;
    const ranges = condition.values.flatMap((value) => {
      const range = parseRange(value);
      return typeof range === 'string' ? [] : [range];
    });
    return { field, ranges };
  }
  return undefined;
}
