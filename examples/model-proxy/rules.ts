import type { RuleSpec, RulesInput } from '@sluice/core';

/** Requests a minute per API key: checked as a request arrives, before its body is read. */
export const REQUEST_RULES: RulesInput = {
  rules: [{ name: 'requests_per_key', key: ['api_key'], limit: { requests: 60, per: '1m' }, cost: 1 }],
};

/**
 * The token budgets, on the completion route once its body is read: tokens a minute per API key and tokens a
 * day per organisation, each reserved at the request's `max_tokens` and settled at the upstream's `usage`.
 */
export const TOKEN_RULES: RuleSpec[] = [
  {
    name: 'tokens_per_key',
    key: ['api_key'],
    algorithm: 'gcra',
    limit: { requests: 10000, per: '1m' },
    settle: true,
  },
  {
    name: 'tokens_per_org_day',
    key: ['org'],
    algorithm: 'quota',
    limit: { requests: 500, per: 'day' },
    settle: true,
  },
];

/** API keys and their organisations (a real proxy reads them from its accounts). */
export const ORGS: Readonly<Record<string, string>> = { k_alice: 'acme', k_bob: 'acme', k_carol: 'globex' };
