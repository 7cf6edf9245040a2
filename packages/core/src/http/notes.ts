import type { RuleResult } from '../observe/contract.js';
import type { CompiledRules } from '../rules/contract.js';

/** Which rules a check evaluates: the limiter's own (global) and/or a route's. */
export interface CheckScope {
  /** Route-level rules, evaluated in the same store call. */
  readonly rules?: CompiledRules;
  /** false: only `rules`, the global ones were checked elsewhere. Default true. */
  readonly global?: boolean;
}

/** Every global rule, no route's: the scope of a global middleware. */
export const ALL_RULES: CheckScope = Object.freeze({});

/** What one limiter remembers of a request while it is being handled. */
export interface RequestNotes {
  checkedGlobally: boolean;
  /** The route rules already checked (with the global ones, by the global middleware, or alone). */
  checkedRules: CompiledRules | undefined;
  /** The rule result whose numbers the response's headers show. */
  shown: RuleResult | undefined;
  /** The API key validateApiKey judged, so a global and a route check ask once. */
  judgedKey: { readonly key: string; readonly valid: boolean } | undefined;
}

/**
 * A limiter's notes on a request object, made on first use under the limiter's own symbol; undefined for a
 * non-object request. A property, not a WeakMap entry (those cost the garbage collector on every request).
 */
export function notesOf(req: unknown, seen: symbol): RequestNotes | undefined {
  if (typeof req !== 'object' || req === null) return undefined;
  const holder = req as Record<symbol, RequestNotes | undefined>;
  let notes = holder[seen];
  if (notes === undefined) {
    notes = { checkedGlobally: false, checkedRules: undefined, shown: undefined, judgedKey: undefined };
    holder[seen] = notes;
  }
  return notes;
}

/**
 * What is left to check of a request, noting it as checked: a request seen twice by the same limiter (mounted
 * twice, say) is not counted twice, and route rules the global middleware checked with the global ones are not
 * checked again by the route's middleware. Undefined when nothing is left.
 */
export function remainingScope(notes: RequestNotes | undefined, scope: CheckScope): CheckScope | undefined {
  if (notes === undefined) return scope;
  const global = scope.global !== false && !notes.checkedGlobally;
  const rules = scope.rules !== notes.checkedRules ? scope.rules : undefined;
  if (global) notes.checkedGlobally = true;
  if (rules !== undefined) notes.checkedRules = rules;
  // The common cases (nothing checked yet, or a route's rules alone) keep the scope asked for.
  if (global === (scope.global !== false) && rules === scope.rules) return scope;
  if (rules === undefined) return global ? ALL_RULES : undefined;
  return { rules, global };
}
