import type { z } from 'zod';
import { closest, formatPath, show } from '../base/show.js';
import { mustBe, oneOf } from './fieldSchemas.js';
import { FIELDS } from './schema.js';

const LIMIT_FORMS = 'a limit is {requests, per, burst} or {concurrent, lease}';
const COST_FORMS = 'a cost is a whole number, {descriptor, max} or {by, values, default}';

/** A path inside the rules document: `['rules', 2, 'limit', 'per']`. */
export type FieldPath = readonly (string | number)[];

/** A problem before it is placed in a file: where in the document, what is wrong, and whether to point at the key. */
export interface Finding {
  readonly path: FieldPath;
  readonly message: string;
  /** Point at the field's name rather than its value (unknown fields). */
  readonly atKey?: boolean;
  /** Path (formatted) of a required field found missing. */
  readonly missing?: string;
  /** Path (formatted) of the field an unknown field was probably meant to be. */
  readonly suggests?: string;
}

type Issue = z.core.$ZodIssue;

/** Turns zod issues for `input` into human findings; `base` prefixes every path. */
export function findingsFromIssues(issues: readonly Issue[], input: unknown, base: FieldPath): Finding[] {
  return withoutMissingTypos(issues.flatMap((issue) => describeIssue(issue, input, base)));
}

/** `limt: ...` already says "did you mean limit?"; a second problem saying limit is missing adds nothing. */
function withoutMissingTypos(findings: Finding[]): Finding[] {
  const suggested = new Set(findings.flatMap((finding) => (finding.suggests ? [finding.suggests] : [])));
  return findings.filter((finding) => !(finding.missing && suggested.has(finding.missing)));
}

function describeIssue(issue: Issue, root: unknown, base: FieldPath): Finding[] {
  const path = [...base, ...(issue.path as (string | number)[])];
  const relative = issue.path as (string | number)[];
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => unknownField(path, key));
  if (isMissing(root, relative))
    return [{ path, message: `missing required field "${String(path.at(-1))}"`, missing: formatPath(path) }];
  const value = valueAt(root, relative);
  // A sentence naming the field: "`limit.requests` must be a whole number of at least 1, got 0".
  const says = (rest: string) => [{ path, message: `${fieldName(path)} ${rest}` }];
  switch (issue.code) {
    case 'invalid_union':
      return describeUnion(issue, value, path);
    case 'invalid_type':
      return says(mustBe(kindName(issue.expected), value));
    case 'invalid_value':
      return says(notOneOf(value, issue.values.map(String)));
    case 'invalid_key':
      return [{ path, message: 'invalid field name', atKey: true }];
    default:
      // The rule schema's own messages (fieldSchemas.ts) are the rest of that sentence.
      return says(issue.message);
  }
}

/** A field as a message names it: its path inside its rule (`limit.requests`), or in the document. */
function fieldName(path: FieldPath): string {
  const inRule = path[0] === 'rules' && typeof path[1] === 'number' && path.length > 2;
  return `\`${formatPath(inRule ? path.slice(2) : path)}\``;
}

function unknownField(path: FieldPath, key: string): Finding {
  const fields = fieldsAt(path);
  if (fields.names.includes(key)) {
    // Known here, but not in the form the other fields chose (`concurrent` next to `requests`).
    return {
      path: [...path, key],
      message: `"${key}" does not go with the other fields: ${fields.forms}`,
      atKey: true,
    };
  }
  const hint = closest(key, fields.names);
  return {
    path: [...path, key],
    message: `unknown field "${key}"${hint ? ` (did you mean "${hint}"?)` : ''}`,
    atKey: true,
    ...(hint ? { suggests: formatPath([...path, hint]) } : {}),
  };
}

/** Which fields are allowed in the object at `path` (judged by where it sits), and its forms when it has several. */
function fieldsAt(path: FieldPath): { names: readonly string[]; forms?: string } {
  if (path.length === 0) return { names: FIELDS.document };
  const last = path.at(-1);
  if (typeof last === 'number') return { names: FIELDS.rule };
  if (last === 'limit') return { names: FIELDS.limit, forms: LIMIT_FORMS };
  if (last === 'cost') return { names: FIELDS.cost, forms: COST_FORMS };
  if (last === 'lease' && typeof path.at(-2) === 'number') return { names: FIELDS.lease };
  if (last === 'ban' && typeof path.at(-2) === 'number') return { names: FIELDS.ban };
  return { names: [] };
}

/**
 * A union failed in every branch. Report the branch the author most likely meant (the fewest problems, a wrong
 * type at its root counting as far off); when every branch is far off, the union's own message says what fits.
 */
function describeUnion(issue: z.core.$ZodIssueInvalidUnion, value: unknown, path: FieldPath): Finding[] {
  const score = (branch: readonly Issue[]) =>
    branch.reduce(
      (sum, inner) => sum + (inner.path.length === 0 && inner.code !== 'unrecognized_keys' ? 100 : 1),
      0,
    );
  const ranked = issue.errors
    .map((branch) => ({ branch, score: score(branch) }))
    .sort((a, b) => a.score - b.score);
  const best = ranked[0];
  const empty = typeof value === 'object' && value !== null && Object.keys(value).length === 0;
  if (!best || best.score >= 100 || empty) {
    const got = empty ? 'an empty map' : show(value);
    return [{ path, message: `${fieldName(path)} ${issue.message}, got ${got}${choiceHint(issue, value)}` }];
  }
  return findingsFromIssues(best.branch, value, path);
}

function notOneOf(value: unknown, allowed: readonly string[]): string {
  return `${mustBe(oneOf(allowed), value)}${didYouMean(value, allowed)}`;
}

/** ` (did you mean "critical"?)` for a misspelled word one of the union's branches lists. */
function choiceHint(issue: z.core.$ZodIssueInvalidUnion, value: unknown): string {
  const words = issue.errors.flat().flatMap((inner) => (inner.code === 'invalid_value' ? inner.values : []));
  return didYouMean(value, words.map(String));
}

function didYouMean(value: unknown, allowed: readonly string[]): string {
  const hint = typeof value === 'string' ? closest(value, allowed) : undefined;
  return hint ? ` (did you mean "${hint}"?)` : '';
}

function kindName(expected: string): string {
  const names: Record<string, string> = {
    string: 'text',
    number: 'a number',
    boolean: 'true or false',
    array: 'a list',
    object: 'a map',
    record: 'a map',
  };
  return names[expected] ?? expected;
}

/** The value at `path` inside `root`, or undefined when any step is missing. */
export function valueAt(root: unknown, path: FieldPath): unknown {
  let node = root;
  for (const segment of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}

/** True when the last step of `path` names a key its (existing) parent map does not have. */
function isMissing(root: unknown, path: FieldPath): boolean {
  if (path.length === 0) return false;
  const parent = valueAt(root, path.slice(0, -1));
  const key = path.at(-1);
  return (
    parent !== null &&
    typeof parent === 'object' &&
    !Array.isArray(parent) &&
    key !== undefined &&
    !Object.hasOwn(parent, key)
  );
}
