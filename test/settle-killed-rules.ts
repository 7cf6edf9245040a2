import { type CompiledRules, compileRules } from '../packages/core/src/index.js';

export const LIMIT = 1000;
export const ESTIMATE = 600;
export const WINDOW_MS = 60_000;

/** One token budget per API key, reserved at admission from `max_tokens` and settled later. */
export function tokenRules(): CompiledRules {
  return compileRules({
    rules: [
      {
        name: 'tpm',
        key: ['api_key'],
        algorithm: 'fixed_window',
        limit: { requests: LIMIT, per: '1m' },
        cost: { descriptor: 'max_tokens', max: 1000 },
        settle: true,
      },
    ],
  });
}
