/**
 * Rules at scale: how long 10,000 rules take to parse (YAML) and compile, and how long matching one request
 * takes with 10 rules and with 10,000 (the index makes it depend on the rules that could match, not on the
 * file's size). Run: npx tsx bench/rules-match.ts
 */
import { compileRules, type Descriptors, parseRules, type RulesInput } from '@sluice/core';
import { stringify } from 'yaml';
import { RESULT_PREFIX } from './lib/micro.js';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const TENANTS = 5_000;

/** `count` rules: a per-key default, a global one, and the rest per tenant and per route of a tenant. */
function rulesFile(count: number): RulesInput {
  const rules: RulesInput['rules'][number][] = [
    {
      name: 'key_default',
      match: { auth: 'api_key' },
      key: ['api_key'],
      limit: { requests: 600, per: '60s' },
      owner: 'bench',
    },
    { name: 'everyone', global: true, key: [], limit: { requests: 100_000, per: '1s' }, owner: 'bench' },
  ];
  for (let i = 0; rules.length < count; i++) {
    const tenant = `tenant_${i % TENANTS}`;
    rules.push(
      i < TENANTS
        ? {
            name: `t${i}`,
            match: { tenant },
            key: ['tenant'],
            limit: { requests: 1000 + i, per: '60s' },
            owner: 'bench',
          }
        : {
            name: `t${i}_search`,
            match: { tenant, route: '/search' },
            key: ['api_key'],
            limit: { requests: 10, per: '1s' },
            algorithm: 'token_bucket',
            owner: 'bench',
          },
    );
  }
  return { domain: 'bench', rules };
}

function timed<T>(run: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = run();
  return { value, ms: performance.now() - started };
}

/** Median ns per match over several batches. */
function matchNs(rules: ReturnType<typeof compileRules>, requests: readonly Descriptors[]): number {
  const batches: number[] = [];
  let sink = 0;
  for (let batch = 0; batch < 15; batch++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < 200_000; i++) sink += rules.match(requests[i % requests.length]!, NOW).length;
    batches.push(Number(process.hrtime.bigint() - started) / 200_000);
  }
  if (sink < 0) console.log(sink);
  return batches.sort((a, b) => a - b)[Math.floor(batches.length / 2)]!;
}

const requests: Descriptors[] = Array.from({ length: 1000 }, (_, i) => ({
  auth: 'api_key',
  api_key: `key-${i}`,
  tenant: `tenant_${i % 7}`,
  route: '/items',
  ip: `192.0.2.${i % 250}`,
}));

const yaml = stringify(rulesFile(10_000));
const parsed = timed(() => parseRules(yaml, { source: 'bench.yaml' }));
const compiled = timed(() => compileRules(parsed.value));
const fromCode = timed(() => compileRules(rulesFile(10_000)));
const small = compileRules(rulesFile(10));
const matchSmall = matchNs(small, requests);
const matchLarge = matchNs(compiled.value, requests);
const matched = (rules: typeof small) => rules.match(requests[0]!, NOW).length;

console.log(
  `10,000 rules: YAML parse + validate ${parsed.ms.toFixed(0)} ms, compile ${compiled.ms.toFixed(0)} ms`,
);
console.log(`10,000 rules given in code: validate + compile ${fromCode.ms.toFixed(0)} ms`);
console.log(
  `match one request: ${matchSmall.toFixed(0)} ns with 10 rules (${matched(small)} apply), ` +
    `${matchLarge.toFixed(0)} ns with 10,000 rules (${matched(compiled.value)} apply)`,
);
console.log(
  `${RESULT_PREFIX}${JSON.stringify({
    parseMs: parsed.ms,
    compileMs: compiled.ms,
    codeCompileMs: fromCode.ms,
    matchNs10: matchSmall,
    matchNs10000: matchLarge,
  })}`,
);
