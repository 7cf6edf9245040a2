import { parseDuration, yamlPosition } from '@sluice/core';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';

/** What a step expects of its requests. Absent fields are not checked. */
export interface Expectation {
  /** How many of the step's requests are allowed. */
  readonly allowed?: number;
  /** How many are denied. */
  readonly denied?: number;
  /** The rule that denied the last denied request. */
  readonly rule?: string;
  /** Retry-After of the last denied request, in whole seconds as sent; `never` when it can never fit. */
  readonly retryAfter?: number | 'never';
  /** Rules that would have denied (shadow, or outside a rollout) the last request. */
  readonly shadowDenied?: readonly string[];
  /** `remaining` after the last request. */
  readonly remaining?: number;
  /** Whether the last denied request was denied by a ban (`ban` in its rule). */
  readonly banned?: boolean;
}

/** Requests sent at one moment (or spaced by `everyMs`) and what they should get. */
export interface Step {
  /** Offset from the case's start, in ms. */
  readonly atMs: number;
  readonly requests: number;
  readonly everyMs: number;
  readonly cost?: number;
  readonly descriptors: Readonly<Record<string, string>>;
  /** Release concurrency leases after each request (default: hold them, as requests still in progress). */
  readonly release: boolean;
  readonly expect: Expectation;
}

/** One policy contract: a request pattern and its expected outcomes, on fresh counters. */
export interface Case {
  readonly name: string;
  readonly startMs: number;
  readonly steps: readonly Step[];
}

const duration = z.union([z.number().nonnegative(), z.string()]).transform((value, ctx) => {
  if (typeof value === 'number') return value * 1000;
  try {
    return parseDuration(value);
  } catch {
    ctx.addIssue({
      code: 'custom',
      message: `"${value}" is not a duration (write 500ms, 30s, 1m, 2h or seconds)`,
    });
    return z.NEVER;
  }
});

const retryAfter = z.union([
  z.literal('never'),
  duration.transform((ms) => Math.max(1, Math.ceil(ms / 1000))),
]);

const expectation = z.union([
  z.enum(['allowed', 'denied']),
  z.strictObject({
    allowed: z.number().int().nonnegative().optional(),
    denied: z.number().int().nonnegative().optional(),
    rule: z.string().optional(),
    retry_after: retryAfter.optional(),
    shadow_denied: z.union([z.string(), z.array(z.string())]).optional(),
    remaining: z.number().int().nonnegative().optional(),
    banned: z.boolean().optional(),
  }),
]);

const descriptors = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String));

const step = z.strictObject({
  at: duration.default(0),
  requests: z.number().int().positive().default(1),
  every: duration.default(0),
  cost: z.number().int().nonnegative().optional(),
  descriptors: descriptors.optional(),
  release: z.boolean().default(false),
  expect: expectation,
});

const time = z.string().refine((text) => !Number.isNaN(Date.parse(text)), 'not an ISO 8601 time');

const testCase = z
  .strictObject({
    name: z.string().min(1),
    descriptors: descriptors.default({}),
    start: time.optional(),
    requests: z.number().int().positive().optional(),
    cost: z.number().int().nonnegative().optional(),
    expect: expectation.optional(),
    steps: z
      .array(step)
      .min(1)
      .refine((steps) => steps.every((s, i) => i === 0 || s.at >= (steps[i - 1]?.at ?? 0)), {
        message: 'steps must be in time order (a clock does not go back)',
      })
      .optional(),
  })
  .refine((c) => (c.steps === undefined) !== (c.expect === undefined), {
    message: 'a case has either steps, or requests with expect',
  });

const casesFile = z.strictObject({
  start: time.optional(),
  cases: z.array(testCase).min(1),
});

type RawExpectation = z.output<typeof expectation>;

function expectationOf(raw: RawExpectation, requests: number): Expectation {
  if (raw === 'allowed') return { allowed: requests, denied: 0 };
  if (raw === 'denied') return { allowed: 0, denied: requests };
  const { retry_after, shadow_denied, ...rest } = raw;
  return {
    ...rest,
    ...(retry_after === undefined ? {} : { retryAfter: retry_after }),
    ...(shadow_denied === undefined ? {} : { shadowDenied: [shadow_denied].flat() }),
  };
}

/** A problem in a cases file, with the field path. */
export class CasesError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'CasesError';
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
}

/** Parses a cases file. `defaultStartMs` is used when neither the file nor a case gives `start`. */
export function parseCases(text: string, source: string, defaultStartMs: number): Case[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new CasesError(
      doc.errors.map((error) => {
        const { line, col } = lineCounter.linePos(error.pos[0]);
        return `${source}:${line}:${col}: YAML: ${error.message.split('\n')[0]}`;
      }),
    );
  }
  const result = casesFile.safeParse(doc.toJS({ maxAliasCount: 100 }));
  if (!result.success) {
    throw new CasesError(
      result.error.issues.map((issue) => {
        // An unknown field is reported where its key is written, not at the map that holds it.
        const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
        const path = keys.length > 0 ? [...issue.path, keys[0]!] : issue.path;
        const { line, column } = yamlPosition(doc, lineCounter, path, keys.length > 0);
        return `${source}:${line}:${column} ${formatPath(issue.path)}: ${issue.message}`;
      }),
    );
  }
  const fileStart = result.data.start === undefined ? defaultStartMs : Date.parse(result.data.start);
  return result.data.cases.map((c) => {
    const startMs = c.start === undefined ? fileStart : Date.parse(c.start);
    const requests = c.requests ?? 1;
    const steps: Step[] = c.steps
      ? c.steps.map((s) => ({
          atMs: s.at,
          requests: s.requests,
          everyMs: s.every,
          ...(s.cost === undefined ? {} : { cost: s.cost }),
          descriptors: { ...c.descriptors, ...s.descriptors },
          release: s.release,
          expect: expectationOf(s.expect, s.requests),
        }))
      : [
          {
            atMs: 0,
            requests,
            everyMs: 0,
            ...(c.cost === undefined ? {} : { cost: c.cost }),
            descriptors: c.descriptors,
            release: false,
            expect: expectationOf(c.expect as RawExpectation, requests),
          },
        ];
    return { name: c.name, startMs, steps };
  });
}
