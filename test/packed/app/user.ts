/**
 * A TypeScript user's file. The packed test checks it with tsc under `module: node16` (the app is CommonJS, so this
 * compiles to require calls) and under `moduleResolution: bundler`; the node16 build is also run. The
 * `@ts-expect-error` lines prove the types are real: were any package typed `any`, they would be unused. Core's
 * subpath entries are used as their authors would: `@sluice/core/http` (adapters), `@sluice/core/testing` (stores:
 * the shared vectors run here without a test runner; the contract suite takes one's functions), `@sluice/core/store`
 * (a store author's table of states, decided by the evaluator); the adapters' `@sluice/express/facts` and
 * `@sluice/fastify/facts` as an adapter author on either framework (NestJS's guard) reads them; @sluice/graphql's
 * root and its server entries (`/apollo`, `/yoga`, `/mercurius`) as a GraphQL server's author plugs them in.
 */
import {
  compileRules,
  createLimiter,
  type Decision,
  MemoryStore,
  parseRules,
  RulesError,
} from '@sluice/core';
import { retryAfterSeconds } from '@sluice/core/http';
import { evaluateChecks, type StateTable } from '@sluice/core/store';
import { describeStoreContract, loadVectors, runVectorCase, type TestApi } from '@sluice/core/testing';
import { rateLimit as expressRateLimit } from '@sluice/express';
import { ExpressFacts } from '@sluice/express/facts';
import { rateLimit as fastifyRateLimit } from '@sluice/fastify';
import { FastifyFacts } from '@sluice/fastify/facts';
import { type CostEstimate, costDirectivesSdl, costEstimator } from '@sluice/graphql';
import { apolloCostBudget } from '@sluice/graphql/apollo';
import { mercuriusCostBudget } from '@sluice/graphql/mercurius';
import { useCostBudget } from '@sluice/graphql/yoga';
import { rateLimit as koaRateLimit } from '@sluice/koa';
import { prometheusObserver } from '@sluice/prometheus';
import { RedisStore } from '@sluice/redis';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { buildSchema } from 'graphql';
import type { Redis } from 'ioredis';
import Koa from 'koa';

const rules = compileRules(
  parseRules('domain: typed\nrules:\n  - {name: per_key, key: [api_key], limit: {requests: 1, per: 1h}}\n'),
);

express().use(expressRateLimit({ rules }));
// @ts-expect-error: an unknown option does not type-check (never called: it would throw at start-up too)
export const typo = () => expressRateLimit({ rulez: rules });
new Koa().use(koaRateLimit({ rules, skip: (ctx) => ctx.path === '/health' }));
void Fastify().register(fastifyRateLimit, { rules });
export const factsKinds: readonly string[] = [ExpressFacts.name, FastifyFacts.name];
export const redisStore = (client: Redis): RedisStore => new RedisStore({ client });

/** A GraphQL server's budget on each server (typed here, not run; the packed test runs them from .mjs and .cjs). */
export function graphqlBudgets(app: FastifyInstance) {
  const estimator = costEstimator(
    buildSchema(`${costDirectivesSdl}\ntype Query { a: Int @cost(weight: "3") }`),
  );
  const estimate = estimator.estimate({ query: '{ a }' });
  const cost: number = estimate.ok ? (estimate satisfies CostEstimate).cost : 0;
  const limiter = createLimiter({ rules, store: new MemoryStore() });
  mercuriusCostBudget(app, { estimator, limiter });
  // @ts-expect-error: throttledStatus is 429 or 200
  useCostBudget({ estimator, limiter, throttledStatus: 500 });
  return {
    cost,
    apollo: apolloCostBudget({ estimator, limiter }),
    yoga: useCostBudget({ estimator, limiter }),
  };
}

/** A store author's proof on their runner (vitest: `import * as vitest from 'vitest'`); typed here, not run. */
export const storeContract = (runner: TestApi) =>
  describeStoreContract(runner, 'MemoryStore', async () => ({ store: new MemoryStore() }));

/** The shared vectors on a MemoryStore: how many cases ran, and how many steps answered otherwise. */
async function vectorMismatches(): Promise<{ cases: number; mismatches: number }> {
  let cases = 0;
  let mismatches = 0;
  for (const file of loadVectors()) {
    for (const vectorCase of file.cases) {
      const store = new MemoryStore();
      cases += 1;
      mismatches += (await runVectorCase(store, vectorCase, { rule: 'vector', tag: 'k' })).length;
      await store.close();
    }
  }
  return { cases, mismatches };
}

/** A store author's call: one check decided by the evaluator over a Map of states, twice (the second denied). */
function evaluatedOnMap(): boolean[] {
  const states = new Map<string, unknown>();
  const table: StateTable = {
    get: (rule, tag) => states.get(`${rule} ${tag}`),
    set: (rule, tag, state) => void states.set(`${rule} ${tag}`, state),
  };
  const check = {
    rule: 'r',
    tag: 't',
    algorithm: 'fixed_window' as const,
    params: { limit: 1, windowMs: 1000, burst: 1 },
    cost: 1,
    mode: 'enforce' as const,
  };
  return [0, 1].map((at) => evaluateChecks([check], at, table)[0]!.allowed);
}

function isRulesError(text: string): boolean {
  try {
    parseRules(text);
    return false;
  } catch (error) {
    return error instanceof RulesError;
  }
}

async function main(): Promise<void> {
  const limiter = createLimiter({ rules, store: new MemoryStore(), observer: prometheusObserver() });
  const first: Decision = await limiter.check({ api_key: 'k1' });
  const second = await limiter.check({ api_key: 'k1' });
  // @ts-expect-error: allowed is a boolean
  const wrong: string = second.allowed;
  await limiter.close();
  console.log(JSON.stringify({ first: first.allowed, second: second.allowed, rule: second.rule, wrong }));
  console.log(JSON.stringify({ rulesError: isRulesError('rules: 42') }));
  const retryAfter = retryAfterSeconds(second);
  const vectors = await vectorMismatches();
  console.log(
    JSON.stringify({
      retryAfter: retryAfter !== undefined && retryAfter > 0,
      ...vectors,
      cases: vectors.cases > 0,
      evaluated: evaluatedOnMap(),
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
