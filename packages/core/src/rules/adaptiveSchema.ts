import { z } from 'zod';
import { durationField, field, wholeNumber } from './fieldSchemas.js';

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

const percentage = field<string | number>(
  (value) => percentFraction(value) !== undefined,
  'a percentage from 0% to 100% (say 5%)',
);

/** A number strictly between `low` and `high`, or up to `high` inclusive when `closed`. */
function share(low: number, high: number, closed: boolean) {
  return field<number>(
    (value) => typeof value === 'number' && value > low && (closed ? value <= high : value < high),
    `a number above ${low} and ${closed ? 'at most' : 'below'} ${high}`,
  );
}

const interval = durationField({ minMs: MIN_INTERVAL_MS });

const latencyTarget = z.strictObject({
  /** The percentile watched, e.g. 99 for p99. */
  percentile: field<number>(
    (value) => typeof value === 'number' && value > 0 && value < 100,
    'a percentile above 0 and below 100 (say 99)',
  ),
  /** The latency that percentile must stay under. */
  max: durationField(),
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
    min_samples: wholeNumber(1).optional(),
    /** Below this factor, sheddable requests are refused outright; default 0.5. */
    shed_below: share(0, 1, true).optional(),
  })
  .refine((spec) => spec.error_rate !== undefined || spec.latency !== undefined, {
    error: 'must name a target to watch: error_rate, latency or both',
  });

const priorityClass = z.enum(PRIORITY_CLASSES);

/** `priority:` as written: a class, or the descriptor that names each request's class. */
export const prioritySpec = z.union(
  [
    priorityClass,
    z.strictObject({
      descriptor: field<string>(
        (value) => typeof value === 'string' && value.length > 0 && value.length <= 128,
        'a descriptor name of 1 to 128 characters',
      ),
      default: priorityClass.optional(),
    }),
  ],
  { error: 'must be critical, normal, sheddable or {descriptor, default}' },
);

/** `adaptive:` after validation. */
export type AdaptiveSpec = z.output<typeof adaptiveSpec>;

/** `priority:` after validation. */
export type PrioritySpec = z.output<typeof prioritySpec>;
