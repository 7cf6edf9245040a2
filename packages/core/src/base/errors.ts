/** Kinds of store failure, as reported to observers and metrics. */
export type StoreErrorKind = 'timeout' | 'error' | 'breaker_open';

/** Where a problem sits in a rules file. */
export interface RuleProblem {
  /** File name or source label given to the parser. */
  readonly source: string;
  /** 1-based line and column; 0 when the position is unknown. */
  readonly line: number;
  readonly column: number;
  /** Field path such as `rules[2].limit.per`, or '' for the whole document. */
  readonly path: string;
  readonly message: string;
}

/** Formats a problem as `file:line:column path: message`. */
export function formatProblem(p: RuleProblem): string {
  const where = p.line > 0 ? `${p.source}:${p.line}:${p.column}` : p.source;
  return p.path ? `${where} ${p.path}: ${p.message}` : `${where} ${p.message}`;
}

/** A rules file (or object) that cannot be used. Lists every problem found, not only the first. */
export class RulesError extends Error {
  readonly code = 'ERR_SLUICE_RULES';
  readonly problems: readonly RuleProblem[];

  constructor(problems: readonly RuleProblem[]) {
    super(`invalid rules:\n${problems.map((p) => `  ${formatProblem(p)}`).join('\n')}`);
    this.name = 'RulesError';
    this.problems = problems;
  }
}

/** Store failure codes. */
/** `ERR_SLUICE_LEASE_LOST`: a renewal found held leases gone from the store (see engine/leaseKeeper.ts). */
export type StoreErrorCode =
  | 'ERR_SLUICE_STORE'
  | 'ERR_SLUICE_STORE_TIMEOUT'
  | 'ERR_SLUICE_BREAKER_OPEN'
  | 'ERR_SLUICE_LEASE_LOST';

/** A store call that failed, timed out or was skipped by the breaker. */
export class StoreError extends Error {
  readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
    this.code = code;
  }
}

/**
 * The evaluator failed while deciding a rule's keys (a state it could not read, a bug), after the store had
 * answered: that request fails open, but the store is not unreachable, so a store's breaker and its notices do
 * not count it. Names the rule, never a key; the error thrown is the `cause`.
 */
export class DecisionError extends StoreError {
  readonly rule: string;

  constructor(rule: string, cause: unknown) {
    const what = cause instanceof Error ? cause.name : typeof cause;
    super('ERR_SLUICE_STORE', `deciding rule ${rule} failed (${what}); the store answered`, { cause });
    this.name = 'DecisionError';
    this.rule = rule;
  }
}

/** The kind of store failure an error stands for, as observers and metrics report it. */
export function storeErrorKind(error: unknown): StoreErrorKind {
  if (error instanceof StoreError) {
    if (error.code === 'ERR_SLUICE_STORE_TIMEOUT') return 'timeout';
    if (error.code === 'ERR_SLUICE_BREAKER_OPEN') return 'breaker_open';
  }
  return 'error';
}

/** A wrong option or argument given in code (bad cost, bad store object, ...). */
export class ConfigError extends Error {
  readonly code = 'ERR_SLUICE_CONFIG';

  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
