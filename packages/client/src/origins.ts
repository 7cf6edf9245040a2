import { RetryBudget, type RetryBudgetOptions } from './budget.js';
import { FirstAnswer } from './firstAnswer.js';
import { GraphqlCosts } from './graphqlCost.js';
import { Pacer } from './pacer.js';
import { TokenBudget } from './tokenBudget.js';

/** What the client keeps per origin: its pacing schedule, its first answer, its retry, token and GraphQL budgets. */
export interface OriginState {
  readonly pacer: Pacer;
  readonly firstAnswer: FirstAnswer;
  readonly budget: RetryBudget | undefined;
  /** The origin's token budget, from the model-API `x-ratelimit-*-tokens` fields. */
  readonly tokens: TokenBudget;
  /** The budgets of cost points of the origin's GraphQL endpoints, and what their queries cost. */
  readonly graphql: GraphqlCosts;
  /** The last pass a solved challenge earned at this origin (`Sluice-Pass`), sent until refused. */
  pass: string | undefined;
}

/** Settings every origin's state is made with. */
export interface OriginSettings {
  readonly maxOrigins: number;
  readonly jitterMs: number;
  readonly random: () => number;
  readonly retryBudget: Required<RetryBudgetOptions> | false;
}

/** Per-origin state, bounded: the least recently used origin is forgotten first. */
export class Origins {
  readonly #settings: OriginSettings;
  readonly #states = new Map<string, OriginState>();

  constructor(settings: OriginSettings) {
    this.#settings = settings;
  }

  /** The state of `origin`, made on first use. */
  get(origin: string): OriginState {
    let state = this.#states.get(origin);
    if (state === undefined) {
      const { jitterMs, random, retryBudget } = this.#settings;
      state = {
        pacer: new Pacer(jitterMs, random),
        firstAnswer: new FirstAnswer(),
        tokens: new TokenBudget(),
        graphql: new GraphqlCosts(),
        budget: retryBudget === false ? undefined : new RetryBudget(retryBudget),
        pass: undefined,
      };
      if (this.#states.size >= this.#settings.maxOrigins)
        this.#states.delete(this.#states.keys().next().value!);
    } else this.#states.delete(origin);
    this.#states.set(origin, state);
    return state;
  }
}
