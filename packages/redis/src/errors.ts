import { StoreError } from '@sluice/core/store';

/**
 * One request's counter state in Redis could not be read (a key of the wrong type, or a value the script
 * cannot parse): that request alone fails, the others of its script call are decided normally. The
 * unreadable keys have been deleted, so their rules count afresh from the next request. Redis itself
 * answered, so it does not count as a failure for the breaker. Names rules, never keys or values.
 */
export class KeyStateError extends StoreError {
  /** The rules whose state was unreadable (and removed); empty when no single check could be blamed. */
  readonly rules: readonly string[];

  constructor(rules: readonly string[]) {
    const which = rules.length > 0 ? `rule ${rules.join(', ')}` : 'a rule of this request';
    super(
      'ERR_SLUICE_STORE',
      `state of ${which} in Redis was unreadable (wrong type or format); removed, counting starts afresh`,
    );
    this.name = 'KeyStateError';
    this.rules = rules;
  }
}
