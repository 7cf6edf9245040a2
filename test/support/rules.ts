import type { CompiledRules, RulesSource } from '@sluice/core/store';

/** Resolves with the next table or error a reloading rules source reports. */
export function nextEvent(source: RulesSource): Promise<CompiledRules | Error> {
  return new Promise((resolve) => {
    const unsubscribe = source.subscribe(
      (rules) => {
        unsubscribe();
        resolve(rules);
      },
      (error) => {
        unsubscribe();
        resolve(error);
      },
    );
  });
}
