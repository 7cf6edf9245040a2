import { createLimiter, type Decision, type Lists, MemoryStore } from '@sluice/core';
import type { CompiledRules } from '@sluice/core/store';
import { parseCommandArgs } from '../args.js';
import { type Case, CasesError, type Expectation, parseCases, type Step } from '../cases.js';
import { type Command, EXIT, type Io, readTextFile, UsageError } from '../io.js';
import { LIST_OPTION, listHelp, listsOf } from '../lists.js';
import { countOf, formatDuration, loadChecked } from '../rulesFile.js';

/** What a step's requests actually got, in the terms of {@link Expectation}. */
interface Observed {
  readonly allowed: number;
  readonly denied: number;
  readonly rule: string;
  readonly retryAfter: number | 'never' | 'none';
  readonly shadowDenied: readonly string[];
  readonly remaining: number;
  readonly banned: boolean;
}

/** Retry-After as the adapters send it: whole seconds, at least 1; `never` for a request that cannot fit. */
function retryAfterSeconds(decision: Decision): number | 'never' {
  if (!Number.isFinite(decision.retryAfterMs)) return 'never';
  return Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
}

async function runStep(
  limiter: ReturnType<typeof createLimiter>,
  step: Step,
  setNow: (ms: number) => void,
  startMs: number,
): Promise<Observed> {
  let allowed = 0;
  let lastDenied: Decision | undefined;
  let last: Decision | undefined;
  for (let i = 0; i < step.requests; i++) {
    setNow(startMs + step.atMs + i * step.everyMs);
    const decision = await limiter.check(
      step.descriptors,
      step.cost === undefined ? {} : { cost: step.cost },
    );
    if (decision.allowed) allowed++;
    else lastDenied = decision;
    if (step.release) await limiter.release(decision);
    last = decision;
  }
  return {
    allowed,
    denied: step.requests - allowed,
    rule: lastDenied?.rule ?? '(no denial)',
    retryAfter: lastDenied ? retryAfterSeconds(lastDenied) : 'none',
    shadowDenied: (last?.results ?? []).filter((r) => r.shadowDenied).map((r) => r.rule),
    remaining: last?.remaining ?? 0,
    banned: lastDenied?.reason === 'ban',
  };
}

/** `- field: expected` / `+ field: actual` lines for every expectation the observation breaks. */
export function diffExpectation(expected: Expectation, observed: Observed): string[] {
  const lines: string[] = [];
  const check = (field: string, want: unknown, got: unknown) => {
    if (want === undefined || JSON.stringify(want) === JSON.stringify(got)) return;
    lines.push(`- ${field}: ${JSON.stringify(want)}`, `+ ${field}: ${JSON.stringify(got)}`);
  };
  check('allowed', expected.allowed, observed.allowed);
  check('denied', expected.denied, observed.denied);
  check('rule', expected.rule, observed.rule);
  check('retry_after', expected.retryAfter, observed.retryAfter);
  check(
    'shadow_denied',
    expected.shadowDenied && [...expected.shadowDenied].sort(),
    [...observed.shadowDenied].sort(),
  );
  check(
    'remaining',
    expected.remaining,
    Number.isFinite(observed.remaining) ? observed.remaining : 'unlimited',
  );
  check('banned', expected.banned, observed.banned);
  return lines;
}

function describeStep(step: Step, index: number): string {
  const spacing = step.everyMs > 0 ? ` every ${formatDuration(step.everyMs)}` : '';
  return `step ${index + 1} (at ${formatDuration(step.atMs)}, ${countOf(step.requests, 'request')}${spacing})`;
}

/** Runs one case on fresh counters; returns the failure lines (empty when it passes). */
async function runCase(rules: CompiledRules, lists: Lists, testCase: Case): Promise<string[]> {
  let now = testCase.startMs;
  const limiter = createLimiter({ rules, lists, store: new MemoryStore(), clock: () => now });
  try {
    for (const [index, step] of testCase.steps.entries()) {
      const observed = await runStep(limiter, step, (ms) => (now = ms), testCase.startMs);
      const diff = diffExpectation(step.expect, observed);
      if (diff.length > 0) return [describeStep(step, index), ...diff];
    }
    return [];
  } finally {
    await limiter.close();
  }
}

function startOfTodayUtc(): number {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
}

async function readCases(path: string, io: Io): Promise<Case[] | number> {
  const text = await readTextFile(path, io);
  if (typeof text === 'number') return text;
  try {
    return parseCases(text, path, startOfTodayUtc());
  } catch (error) {
    if (!(error instanceof CasesError)) throw error;
    for (const problem of error.problems) io.err(problem);
    return EXIT.usage;
  }
}

/** `sluice test <rules> <cases.yaml>`: policy contract tests on a MemoryStore with a manual clock. */
export const testCommand: Command = {
  name: 'test',
  summary:
    'run policy contract tests (if-then tables of requests and expected outcomes) against a rules file',
  help: `Usage: sluice test <rules.yaml> <cases.yaml> [--list <name=file>]...

Runs each case on fresh in-memory counters with a manual clock (no waiting, no Redis) and compares what the
limiter decides with what the case expects. Failures are printed as a diff (- expected, + actual). Run it in CI
before a rules change ships.

cases.yaml:
  start: 2026-01-05T00:00:00Z        # optional clock start (also per case); default today 00:00 UTC
  cases:
    - name: acme gets 3000 a minute, not 600
      descriptors: {auth: api_key, tenant: acme, api_key: k1}
      requests: 3001
      expect: {allowed: 3000, denied: 1, rule: key_override_acme, retry_after: 1s}
    - name: a client that waits Retry-After gets through
      descriptors: {auth: anonymous, ip: 198.51.100.7}
      steps:
        - {at: 0s, requests: 60, expect: allowed}
        - {at: 0s, expect: {denied: 1, rule: anon_per_ip, retry_after: 1s}}
        - {at: 60s, expect: allowed}

A step: at (offset from start; seconds or 500ms/30s/1m), requests (default 1), every (spacing between the
step's requests), cost, descriptors (merged over the case's), release (release concurrency leases after each
request; default false: they stay held), expect.
expect: allowed (all allowed) | denied (all denied) | {allowed: n, denied: n, rule: <denying rule of the last
denial>, retry_after: <Retry-After seconds as sent> | never, shadow_denied: [rules that would have denied the
last request], remaining: n, banned: true|false <the last denial was a ban's>}. Fields left out are not
checked.

Options:
${listHelp(24)}
  -h, --help            show this help

Exit codes: 0 all cases pass, 1 a case failed or the rules are invalid, 2 usage error, unreadable file, an
invalid cases file or a bad --list file.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, LIST_OPTION);
    const [rulesPath, casesPath, ...extra] = parsed.positionals;
    if (rulesPath === undefined || casesPath === undefined || extra.length > 0) {
      throw new UsageError('test takes a rules file and a cases file');
    }
    const loaded = await loadChecked(rulesPath, io);
    if (typeof loaded === 'number') return loaded;
    const lists = await listsOf(parsed, [loaded.rules], 'test', io);
    if (typeof lists === 'number') return lists;
    const cases = await readCases(casesPath, io);
    if (typeof cases === 'number') return cases as typeof EXIT.usage;
    let failed = 0;
    for (const testCase of cases) {
      const failure = await runCase(loaded.rules, lists, testCase);
      if (failure.length === 0) {
        io.out(`ok    ${testCase.name}`);
        continue;
      }
      failed++;
      io.out(`FAIL  ${testCase.name}`);
      for (const line of failure) io.out(`      ${line}`);
    }
    io.out('');
    io.out(
      `${countOf(cases.length - failed, 'case')} passed, ${failed} failed (rules version ${loaded.rules.version})`,
    );
    return failed > 0 ? EXIT.findings : EXIT.ok;
  },
};
