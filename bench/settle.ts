/**
 * The cost of a settle per request (issue 30), in process on a MemoryStore: CPU µs per request for a check alone
 * and for a check plus its settle (500 reserved, 120 or 800 used), with a requests rule and two settled
 * token rules (per key, per organisation), 10,000 keys. Rounds interleave the three; each figure is the median
 * (min-max) over rounds.
 *
 *   npx tsx bench/settle.ts [--rounds=5] [--requests=20000]
 */
import { compileRules, createLimiter, type Limiter } from '@sluice/core';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const ROUNDS = arg('rounds', 5);
const REQUESTS = arg('requests', 20_000);
const KEYS = 10_000;

function limiter(now: () => number): Limiter {
  const rules = compileRules({
    rules: [
      { name: 'rpm', key: ['key'], limit: { requests: 1_000_000, per: '1m' }, cost: 1 },
      {
        name: 'tpm',
        key: ['key'],
        algorithm: 'gcra',
        limit: { requests: 1_000_000, per: '1m' },
        cost: { descriptor: 'max_tokens', max: 4096 },
        settle: true,
      },
      {
        name: 'org_day',
        key: ['org'],
        algorithm: 'quota',
        limit: { requests: 1_000_000_000, per: 'day' },
        cost: { descriptor: 'max_tokens', max: 4096 },
        settle: true,
      },
    ],
  });
  return createLimiter({ rules, clock: now });
}

type Mode = 'check' | 'check+settle down' | 'check+settle up';

/** CPU µs per request over REQUESTS requests in `mode`. */
async function round(mode: Mode): Promise<number> {
  let t = Date.UTC(2026, 11, 1);
  const limits = limiter(() => t);
  const start = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    t += 1;
    const key = `k${i % KEYS}`;
    const decision = await limits.check({ key, org: `o${i % 100}`, max_tokens: '500' });
    if (mode === 'check+settle down') await limits.settle(decision, 120);
    else if (mode === 'check+settle up') await limits.settle(decision, 800);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / REQUESTS;
}

const MODES: Mode[] = ['check', 'check+settle down', 'check+settle up'];
const figures = new Map<Mode, number[]>(MODES.map((m) => [m, []]));
for (let r = 0; r < ROUNDS; r++)
  for (let k = 0; k < MODES.length; k++) {
    const mode = MODES[(k + r) % MODES.length]!;
    figures.get(mode)!.push(await round(mode));
  }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [mode, xs] of figures)
  console.log(
    `${mode.padEnd(26)} ${median(xs).toFixed(2)} µs/request (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})`,
  );
