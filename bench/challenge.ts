/**
 * Cost of the proof-of-work challenge (issue 29), on one core: `npx tsx bench/challenge.ts [--runs=40]`.
 *
 * Solving: for each difficulty, the median and 90th percentile over `runs` fresh challenges of the time
 * `solveChallenge` takes (Node's SHA-256, as @sluice/client would; a browser's SubtleCrypto loop is slower per
 * hash). The expected work doubles with each bit: 2^difficulty hashes on average. Verifying: microseconds per
 * `verifySolution` of a good solution (one HMAC, one SHA-256), and of a forged one (the HMAC alone).
 */
import { issueChallenge, solveChallenge, verifySolution } from '../packages/core/src/http/challenge.js';

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
