import { z } from 'zod';
import { durationMs, isCalendarPeriod, unitHint } from '../base/duration.js';
import { show } from '../base/show.js';

// zod types for the fields of a rule whose errors are the rest of a plain sentence: findings.ts writes the field
// first (`` `limit.requests` must be a whole number of at least 1, got 0 ``). Every message here starts with
// "must" and says what the field takes, then what it got.

/** `must be <what>, got <value>`: the one wording of a field's error. */
export function mustBe(what: string, value: unknown): string {
  return `must be ${what}, got ${show(value)}`;
}

/** A value that passes `test`; its error says it must be `what`. */
export function field<T>(test: (value: unknown) => boolean, what: string) {
  return z.custom<T>(test, { error: (issue) => mustBe(what, issue.input) });
}

/** A whole number of at least `min`. */
export function wholeNumber(min: number) {
  return field<number>(
    (value) => Number.isInteger(value) && (value as number) >= min,
    `a whole number of at least ${min}`,
  );
}

/** A whole number from `min` to `max`; `what` names it when it is more than a number (`an HTTP status`). */
export function wholeRange(min: number, max: number, what = 'a whole number') {
  return field<number>(
    (value) => Number.isInteger(value) && (value as number) >= min && (value as number) <= max,
    `${what} from ${min} to ${max}`,
  );
}

/** Units a duration takes, as the messages show them. */
const DURATION_FORMS = 'a duration such as 30s, 5m or 1h';

/** A duration of at least `minMs` (above 0 by default); `calendar` also takes day, week and month. */
export function durationField(options: { calendar?: boolean; minMs?: number } = {}) {
  const { calendar = false, minMs = 1 } = options;
  const what = calendar ? `${DURATION_FORMS} (or day, week or month for a quota)` : DURATION_FORMS;
  return z.custom<string>(
    (value) => (durationMs(value) ?? 0) >= minMs || (calendar && isCalendarPeriod(value)),
    {
      error: (issue) =>
        durationMs(issue.input) === undefined || minMs <= 1
          ? `${mustBe(what, issue.input)}${Number(issue.input) > 0 ? unitHint(issue.input) : ''}`
          : mustBe(`a duration of at least ${minMs}ms`, issue.input),
    },
  );
}

/** Choices as a sentence offers them: "a or b", "a, b or c"; "one of a, b, …" when there are many. */
export function oneOf(choices: readonly string[]): string {
  if (choices.length > 3) return `one of ${choices.join(', ')}`;
  return choices.length < 2 ? choices.join('') : `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`;
}
