import { z } from 'zod';
import { durationMs, unitHint } from '../base/duration.js';
import { show } from '../base/show.js';

/** Priority classes, from the first to be shed to the last. */
export const PRIORITY_CLASSES = ['sheddable', 'normal', 'critical'] as const;

/** Shortest judging interval: a shared factor is written a few times a second at most. */
export const MIN_INTERVAL_MS = 100;

/** `10%` or `10` as 0.1; undefined unless it is a number from 0 to 100 (a `%` sign allowed). */
export function percentFraction(value: unknown): number | undefined {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string') return undefined;
  const match = /^(\d{1,3}(?:\.\d+)?)%?$/.exec(text.trim());
  const percent = match ? Number(match[1]) : Number.NaN;
  return percent >= 0 && percent <= 100 ? percent / 100 : undefined;
}

const percentage = z.custom<string | number>((value) => percentFraction(value) !== undefined, {
  error: (issue) => `${show(issue.input)} is not a percentage from 0% to 100% (say 5%)`,
});

/** A number strictly between `low` and `high`, or up to `high` inclusive when `closed`. */
function share(low: number, high: number, closed: boolean) {
  return z.custom<number>(
    (value) => typeof value === 'number' && value > low && (closed ? value <= high : value < high),
    {
      error: (issue) =>
        `${show(issue.input)} is not a number above ${low} and ${closed ? 'at most' : 'below'} ${high}`,
    },
  );
}

const interval = z.custom<string>((value) => (durationMs(value) ?? 0) >= MIN_INTERVAL_MS, {
  error: (issue) => {
    const ms = durationMs(issue.input);
    return ms === undefined
      ? `${show(issue.input)} is not a duration${unitHint(issue.input)}`
      : `${show(issue.input)} is too short: the least interval is ${MIN_INTERVAL_MS}ms`;
  },
});

const latencyTarget = z.strictObject({
  /** The percentile watched, e.g. 99 for p99. */
  percentile: z.custom<number>((value) => typeof value === 'number' && value > 0 && value < 100, {
    error: (issue) => `${show(issue.input)} is not a percentile above 0 and below 100 (say 99)`,
  }),
  /** The latency that percentile must stay under. */
  max: z.custom<string>((value) => (durationMs(value) ?? 0) > 0, {
    error: (issue) => `${show(issue.input)} is not a duration${unitHint(issue.input)}`,
  }),
});

/** `adaptive:` as written: the health targets and the AIMD steps (see adaptive/aimd.ts). */
export const adaptiveSpec = z
  .strictObject({
    /** Target share of responses with a 5xx status; above it the factor drops. */
    error_rate: percentage.optional(),
    /** Target latency percentile: `{percentile: 99, max: 500ms}`. */
    latency: latencyTarget.optional(),
    /** Multiplies the factor after an unhealthy interval; default 0.5. */
    decrease: share(0, 1, false).optional(),
    /** Added to the factor after a healthy interval; default 0.1. */
    increase: share(0, 1, true).optional(),
    /** The least factor; default 0.1. */
    floor: share(0, 1, true).optional(),
    /** How long outcomes are gathered before each judgement; default 1s. */
    interval: interval.optional(),
    /** Fewer responses than this in an interval judge nothing bad (a quiet backend climbs back); default 20. */
    min_samples: z
      .custom<number>((value) => Number.isInteger(value) && (value as number) >= 1, {
        error: (issue) => `${show(issue.input)} is not a whole number of at least 1`,
      })
      .optional(),
    /** Below this factor, sheddable requests are refused outright; default 0.5. */
    shed_below: share(0, 1, true).optional(),
  })
  .refine((spec) => spec.error_rate !== undefined || spec.latency !== undefined, {
    error: 'adaptive needs a target to watch: error_rate, latency or both',
  });

const priorityClass = z.enum(PRIORITY_CLASSES);

/** `priority:` as written: a class, or the descriptor that names each request's class. */
export const prioritySpec = z.union(
  [
    priorityClass,
    z.strictObject({ descriptor: z.string().min(1).max(128), default: priorityClass.optional() }),
  ],
  { error: 'expected critical, normal, sheddable or {descriptor, default}' },
);

/** `adaptive:` after validation. */
export type AdaptiveSpec = z.output<typeof adaptiveSpec>;

/** `priority:` after validation. */
export type PrioritySpec = z.output<typeof prioritySpec>;
