/**
 * Cost of the proof-of-work challenge (issue 29), on one core: `npx tsx bench/challenge.ts [--runs=40]`.
 *
 * Solving: for each difficulty, the median and 90th percentile over `runs` fresh challenges of the time
 * `solveChallenge` takes (Node's SHA-256, as @sluice/client would; a browser's SubtleCrypto loop is slower per
 * hash). The expected work doubles with each bit: 2^difficulty hashes on average. Verifying: microseconds per
 * `verifySolution` of a good solution (one HMAC, one SHA-256), and of a forged one (the HMAC alone).
 */
import { issueChallenge, solveChallenge, verifySolution } from '../packages/core/src/escalation/challenge.js';

const runs = Number(process.argv.find((arg) => arg.startsWith('--runs='))?.slice(7) ?? 40);
const SECRET = 'bench-secret-bench-secret';
const NOW = Date.now();

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

console.log('difficulty  solve median ms  solve p90 ms  hashes expected');
for (const difficulty of [8, 12, 14, 16, 18, 20]) {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const challenge = issueChallenge(SECRET, 'api', `key-${run}`, difficulty, NOW, 60_000);
    const start = process.hrtime.bigint();
    solveChallenge(challenge);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${String(difficulty).padStart(10)}  ${quantile(times, 0.5).toFixed(2).padStart(15)}  ${quantile(
      times,
      0.9,
    )
      .toFixed(2)
      .padStart(12)}  ${String(2 ** difficulty).padStart(15)}`,
  );
}

const challenge = issueChallenge(SECRET, 'api', 'key', 12, NOW, 60_000);
const good = solveChallenge(challenge);
const forged = `${challenge.token.slice(0, -4)}AAAA:${good.split(':')[1]}`;
for (const [label, solution] of [
  ['verify good', good],
  ['verify forged', forged],
] as const) {
  const count = 200_000;
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) verifySolution(SECRET, solution, 'api', 'key', NOW);
  console.log(`${label}: ${(Number(process.hrtime.bigint() - start) / 1e3 / count).toFixed(2)} µs`);
}

/*
 * Redemption through the HTTP layer, in process (MemoryStore), µs per request: the same rule (with `ban`)
 * without `challenge` on a limiter without the option (the baseline), the same request on a limiter with a challenge rule (no solution or pass sent: what every
 * request of such a limiter pays), a request carrying a pass (one HMAC, the rule left out, the pass budget
 * counted in the same store call), and a solution redeemed (the marker and the budget in that call, the pass
 * signed).
 */
const { createHttpLimiter } = await import('../packages/core/src/http/flow.js');
const { tagFor } = await import('../packages/core/src/store/tags.js');
const IP = '203.0.113.9';
const facts = (headers: Record<string, string>) => ({
  ip: IP,
  method: 'GET',
  url: '/items',
  header: (name: string) => headers[name],
});
const ruleOf = (challenge: boolean) => ({
  name: 'api',
  key: ['ip'],
  limit: { requests: 1_000_000_000, per: '1h' },
  ban: { after: 5, within: '1h', for: '1h' },
  ...(challenge ? { challenge: { after: 1, pass: 1_000_000_000, for: '1h' } } : {}),
});
const quiet = { warn: () => {} };
const plain = createHttpLimiter({ rules: { rules: [ruleOf(false)] }, logger: quiet });
const staged = createHttpLimiter({
  rules: { rules: [ruleOf(true)] },
  logger: quiet,
  challenge: { secret: SECRET },
});
const rule = staged.limiter.rules.rules[0]!;
const keyHash = tagFor(rule, { ip: IP }, SECRET)!;
const issued = issueChallenge(SECRET, 'api', keyHash, 1, Date.now(), 3_600_000);
const first = staged.check({}, facts({ 'sluice-solution': solveChallenge(issued) }));
const pass = 'action' in first && first.action === 'allow' ? first.headers['Sluice-Pass'] : undefined;
if (pass === undefined) throw new Error('no pass earned');
const solutions = Array.from({ length: 20_000 }, () =>
  solveChallenge(issueChallenge(SECRET, 'api', keyHash, 1, Date.now(), 3_600_000)),
);

function perRequest(label: string, count: number, run: (i: number) => unknown, warm = 2000): void {
  for (let i = 0; i < warm; i++) run(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) run(i);
  console.log(`${label}: ${(Number(process.hrtime.bigint() - start) / 1e3 / count).toFixed(2)} µs`);
}
const none = facts({});
const withPass = facts({ 'sluice-pass': pass });
perRequest('http check, limiter without challenge', 200_000, () => plain.check({}, none));
perRequest('http check, challenge rule, nothing sent', 200_000, () => staged.check({}, none));
perRequest('http check, with a pass', 200_000, () => staged.check({}, withPass));
// Each solution once (a second time it is a replay): no warm-up round.
perRequest(
  'http check, a solution redeemed',
  solutions.length,
  (i) => staged.check({}, facts({ 'sluice-solution': solutions[i]! })),
  0,
);
