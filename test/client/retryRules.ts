/** Rules the retry tests share. */
import type { RuleSpec } from '@sluice/core';

/** First attempts: 1 per 10 s per client. Retries: counted apart, 1 per minute per client. */
export const SEPARATE_RETRIES: RuleSpec[] = [
  {
    name: 'first_tries',
    match: { retry: false },
    key: ['ip'],
    limit: { requests: 1, per: '10s' },
    algorithm: 'fixed_window',
  },
  {
    name: 'retries',
    match: { retry: true },
    key: ['ip'],
    limit: { requests: 1, per: '60s' },
    algorithm: 'fixed_window',
  },
];

/** One request a minute for everyone, Retry-After spread by up to 10%: with the clock standing still every denial's exact wait is 60 s. */
export const JITTERED_CAP: RuleSpec = {
  name: 'global_cap',
  global: true,
  key: [],
  limit: { requests: 1, per: '60s' },
  algorithm: 'fixed_window',
  retry_jitter: '10%',
};
