import { type CompiledRules, compileRules } from '../../packages/core/src/index.js';

/** Two streams per client address, each lease 2 s unless renewed: the measured case. */
export function streamRules(): CompiledRules {
  return compileRules({
    domain: 'streams',
    rules: [
      {
        name: 'streams_per_ip',
        match: {},
        key: ['ip'],
        algorithm: 'concurrency',
        limit: { concurrent: 2, lease: '2s' },
      },
    ],
  });
}
