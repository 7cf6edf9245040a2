/**
 * Rules at scale: how long 6,500 rules (1 MiB, the largest file) take to parse (YAML) and compile, and how long matching one request
 * takes with 10 rules and with 10,000 (the index makes it depend on the rules that could match, not on the
 * file's size); then CIDR ranges: one deny rule holding 10 to 100,000 ranges, as many rules of one range
 * each, and a list of 100,000 entries (a prefix tree: the cost stays flat). Run: npx tsx bench/rules-match.ts
 */
import {
  compileRules,
  type Descriptors,
  type Lists,
  parseRules,
  type RulesInput,
  valueList,
} from '@sluice/core';
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
function matchNs(
  rules: ReturnType<typeof compileRules>,
  requests: readonly Descriptors[],
  lists?: Lists,
): number {
  const batches: number[] = [];
  let sink = 0;
  for (let batch = 0; batch < 15; batch++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < 200_000; i++) sink += rules.match(requests[i % requests.length]!, NOW, lists).length;
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

// A file may hold at most MAX_RULES_BYTES (1 MiB): about 6,500 of these rules, not 10,000.
const YAML_RULES = 6_500;
const yaml = stringify(rulesFile(YAML_RULES));
const parsed = timed(() => parseRules(yaml, { source: 'bench.yaml' }));
const compiled = timed(() => compileRules(parsed.value));
const large = compileRules(rulesFile(10_000));
const fromCode = timed(() => compileRules(rulesFile(10_000)));
const small = compileRules(rulesFile(10));
const matchSmall = matchNs(small, requests);
const matchLarge = matchNs(large, requests);
const matched = (rules: typeof small) => rules.match(requests[0]!, NOW).length;

console.log(
  `${YAML_RULES.toLocaleString('en')} rules (${(yaml.length / 2 ** 20).toFixed(2)} MiB): YAML parse + validate ${parsed.ms.toFixed(0)} ms, compile ${compiled.ms.toFixed(0)} ms`,
);
console.log(`10,000 rules given in code: validate + compile ${fromCode.ms.toFixed(0)} ms`);
console.log(
  `match one request: ${matchSmall.toFixed(0)} ns with 10 rules (${matched(small)} apply), ` +
    `${matchLarge.toFixed(0)} ns with 10,000 rules (${matched(large)} apply)`,
);

/** A seeded generator (mulberry32), so every run draws the same ranges. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** `count` distinct IPv4 ranges, /16 to /32, none inside 192.0.2.0/24 (the addresses the requests use). */
function ranges(count: number): string[] {
  const random = seeded(count);
  const found = new Set<string>();
  while (found.size < count) {
    const bits = 16 + Math.floor(random() * 17);
    const address = Math.floor(random() * 2 ** 32) & ~(2 ** (32 - bits) - 1);
    const octets = [address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255];
    if (octets[0] === 192 && octets[1] === 0) continue;
    found.add(`${octets.join('.')}/${bits}`);
  }
  return [...found];
}

const RANGE_COUNTS = [10, 1000, 100_000] as const;
const perIp = { name: 'per_ip', key: ['ip'], limit: { requests: 100, per: '1m' } } as const;
/** Half the requests inside a listed range (192.0.2.0/24 is added to every set), half outside. */
const clients: Descriptors[] = Array.from({ length: 1000 }, (_, i) => ({
  ip: i % 2 === 0 ? `192.0.2.${i % 250}` : `198.18.${i % 200}.${i % 250}`,
}));

const inOneRule = RANGE_COUNTS.map((count) => {
  const table = compileRules({
    rules: [{ name: 'blocked', match: { ip: [...ranges(count), '192.0.2.0/24'] }, action: 'deny' }, perIp],
  });
  return matchNs(table, clients);
});
const oneEach = RANGE_COUNTS.map((count) => {
  const table = compileRules({
    rules: [
      ...ranges(count).map((range, i) => ({ name: `r${i}`, match: { ip: range }, action: 'deny' as const })),
      { name: 'listed', match: { ip: '192.0.2.0/24' }, action: 'deny' },
      perIp,
    ],
  });
  return matchNs(table, clients);
});
const inList = RANGE_COUNTS.map((count) => {
  const table = compileRules({
    rules: [{ name: 'blocked', match: { ip: { list: 'blocked_ips' } }, action: 'deny' }, perIp],
  });
  return matchNs(table, clients, { blocked_ips: valueList([...ranges(count), '192.0.2.0/24']) });
});
const row = (figures: readonly number[]) =>
  figures.map((ns, i) => `${ns.toFixed(0)} ns (${RANGE_COUNTS[i]!.toLocaleString('en')})`).join(', ');
console.log(`CIDR, ranges in one deny rule: ${row(inOneRule)}`);
console.log(`CIDR, one deny rule per range: ${row(oneEach)}`);
console.log(`CIDR, ranges in a list:        ${row(inList)}`);

console.log(
  `${RESULT_PREFIX}${JSON.stringify({
    parseMs: parsed.ms,
    compileMs: compiled.ms,
    codeCompileMs: fromCode.ms,
    matchNs10: matchSmall,
    matchNs10000: matchLarge,
    cidrInOneRuleNs: Object.fromEntries(RANGE_COUNTS.map((count, i) => [count, inOneRule[i]])),
    cidrOneRuleEachNs: Object.fromEntries(RANGE_COUNTS.map((count, i) => [count, oneEach[i]])),
    cidrInListNs: Object.fromEntries(RANGE_COUNTS.map((count, i) => [count, inList[i]])),
  })}`,
);
