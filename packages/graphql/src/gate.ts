import type { Decision, Limiter } from '@sluice/core';
import { deniedResponse, type HeaderFormat, rateLimitHeaders } from '@sluice/core/http';
import { GraphQLError } from 'graphql';
import { type Admission, type Gate, type Priced, price, Unit } from './budget.js';
import type { GraphqlRequest } from './cost/index.js';
import { type Descriptors, type HeaderReader, requestDescriptors, unitDescriptors } from './descriptors.js';
import { type GraphqlHooks, type HooksCore, hooksCore } from './hooks.js';
import {
  type BudgetSettings,
  budgetSettings,
  checkStandalone,
  type DescriptorsHook,
  Notice,
  STANDALONE_NAMES,
  type StandaloneOptions,
} from './options.js';

/*
 * What the three server plugins share: each operation priced, put in its unit (itself, its whole batch, or
 * inside an adapter its HTTP request) and passed through the unit's gate. Standalone, the unit is decided here
 * with `limiter.check`; inside an adapter, the adapter decided it and the hooks hold its decision.
 */

/** Inside a Sluice adapter: the plugin settles the adapter's decision (see hooks.ts). */
export interface InAdapterOptions<Ctx> {
  /** The hooks given to the adapter (`graphqlHooks(estimator, ...)`). */
  readonly hooks: GraphqlHooks;
  /** The adapter's request behind the server's context; each plugin has a default. */
  readonly request?: (ctx: Ctx) => object | undefined;
}

/** A plugin's options: standalone (a `limiter`) or inside an adapter (its `hooks`). */
export type CostBudgetOptions<Ctx> = StandaloneOptions<Ctx> | InAdapterOptions<Ctx>;

/** Where an operation runs: what its unit is found by and decided with. */
export interface OperationSite<Ctx> {
  /** One object per HTTP request: its operations, batched or not, share it. */
  readonly key: object;
  /** The operation's place in its batch (0 when alone). */
  readonly index: number;
  readonly ctx: Ctx;
  readonly header: HeaderReader;
  /** The HTTP request's operations when it is a batch: a whole batch is decided as one. */
  readonly batch?: () => readonly GraphqlRequest[];
}

const IN_ADAPTER_NAMES = ['hooks', 'request'];

/** The gate every operation of a server passes, built once per plugin. */
export class CostGate<Ctx> {
  readonly settings: BudgetSettings;
  readonly #standalone: Standalone<Ctx> | undefined;
  readonly #hooks: HooksCore | undefined;
  readonly #request: (ctx: Ctx) => object | undefined;
  readonly #units = new WeakMap<object, Unit>();
  readonly #estimating: Notice;

  constructor(owner: string, options: CostBudgetOptions<Ctx>, request: (ctx: Ctx) => object | undefined) {
    if (typeof options === 'object' && options !== null && 'hooks' in options) {
      const core = hooksCore(options.hooks);
      if (core === undefined)
        throw new TypeError(`${owner}: option "hooks" must be made by graphqlHooks(...)`);
      if (options.request !== undefined && typeof options.request !== 'function')
        throw new TypeError(`${owner}: option "request" must be a function of the context`);
      const names = Object.keys(options).filter((name) => !IN_ADAPTER_NAMES.includes(name));
      if (names.length > 0)
        throw new TypeError(
          `${owner}: inside an adapter the budget's options go to graphqlHooks(...), not here: ${names.join(', ')}`,
        );
      this.settings = core.settings;
      this.#hooks = core;
      this.#request = options.request ?? request;
    } else {
      this.settings = budgetSettings(owner, options, STANDALONE_NAMES);
      checkStandalone(owner, options);
      this.#standalone = new Standalone(options, this.settings);
      this.#request = request;
    }
    this.#estimating = new Notice(
      this.settings.logger,
      'SLUICE_GRAPHQL_ESTIMATE_FAILED: the cost estimator threw; operations run unlimited until it prices again',
    );
  }

  /** Prices one operation (never throws: an estimator that throws lets the operation through, logged). */
  price(request: GraphqlRequest): Priced | undefined {
    try {
      const priced = price(this.settings, request);
      this.#estimating.clear();
      return priced;
    } catch (error) {
      this.#estimating.say(String(error));
      return undefined;
    }
  }

  /** The gate of one operation; undefined when it runs unlimited (nothing priced or decided it). */
  gate(priced: Priced | undefined, site: OperationSite<Ctx>): Promise<Gate> | undefined {
    if (priced === undefined) return undefined;
    if (this.#hooks !== undefined) return this.#inAdapter(this.#hooks, priced, site);
    const standalone = this.#standalone!;
    if (site.batch === undefined || standalone.batch === 'each')
      return standalone.unit([priced], site).gate(priced);
    let unit = this.#units.get(site.key);
    if (unit === undefined) {
      unit = standalone.unit(
        site.batch().map((one) => this.price(one) ?? UNPRICED),
        site,
      );
      this.#units.set(site.key, unit);
    }
    // An operation the batch's pricing missed (a persisted query's text known only later) is decided alone.
    return (unit.has(site.index) || !priced.ok ? unit : standalone.unit([priced], site)).gate(priced);
  }

  #inAdapter(hooks: HooksCore, priced: Priced, site: OperationSite<Ctx>): Promise<Gate> | undefined {
    const req = this.#request(site.ctx);
    const entry = req === undefined ? undefined : hooks.entryOf(req);
    if (entry === undefined) {
      if (req !== undefined && decidedHere(req)) return Promise.resolve(notPriced());
      hooks.unpriced.say();
      return undefined;
    }
    const unit = hooks.unitOf(entry);
    // Priced here but not by the hooks (a persisted query sent by its hash): the adapter charged nothing.
    if (priced.ok && !unit.has(site.index)) return Promise.resolve(notPriced());
    return unit.gate(priced);
  }
}

/** An operation left out of a whole batch's pricing. */
const UNPRICED: Priced = Object.freeze({ ok: false, errors: [] });

/** The adapter decided the request (its info is on it) without the hooks having priced its operations. */
function decidedHere(req: object): boolean {
  const has = (value: unknown) =>
    typeof value === 'object' &&
    value !== null &&
    ((value as { rateLimit?: unknown }).rateLimit !== undefined ||
      (value as { state?: { rateLimit?: unknown } }).state?.rateLimit !== undefined);
  return has(req) || has((req as { req?: unknown }).req);
}

function notPriced(): Gate {
  return {
    kind: 'refused',
    errors: [
      new GraphQLError(
        'The rate limiter decided this request without pricing its operations: decide the GraphQL route ' +
          'after its body is parsed (afterBody), give the adapter `descriptors: hooks.descriptors`, and send ' +
          'the query text (not only a persisted query hash)',
        { extensions: { code: 'COST_NOT_PRICED' } },
      ),
    ],
  };
}

/** Standalone: units decided with the limiter, the app's descriptors merged with the GraphQL ones. */
class Standalone<Ctx> {
  readonly batch: 'each' | 'whole';
  readonly #limiter: Pick<Limiter, 'check' | 'settle'>;
  readonly #descriptors: DescriptorsHook<Ctx> | undefined;
  readonly #headers: HeaderFormat;
  readonly #settings: BudgetSettings;
  readonly #failing: Notice;

  constructor(options: StandaloneOptions<Ctx>, settings: BudgetSettings) {
    this.batch = options.batch ?? 'each';
    this.#limiter = options.limiter;
    this.#descriptors = options.descriptors;
    this.#headers = options.headers ?? 'draft';
    this.#settings = settings;
    this.#failing = new Notice(
      settings.logger,
      'SLUICE_GRAPHQL_CHECK_FAILED: deciding failed (the descriptors hook or the limiter threw); operations run unlimited',
    );
  }

  unit(ops: readonly Priced[], site: OperationSite<Ctx>): Unit {
    return new Unit(this.#settings, ops, () => this.#admit(ops, site));
  }

  async #admit(ops: readonly Priced[], site: OperationSite<Ctx>): Promise<Admission> {
    try {
      let own = this.#descriptors?.(site.ctx);
      // Awaited only when the hook is async: a plain object costs no turn of the microtask queue.
      if (isPromiseLike(own)) own = await own;
      const descriptors = requestDescriptors(pricedDescriptors(ops), site.header, own);
      const decision = await this.#limiter.check(descriptors);
      this.#failing.clear();
      return this.#admission(decision);
    } catch (error) {
      this.#failing.say(String(error));
      return { allowed: true, decision: undefined, headers: {}, settle: async () => undefined };
    }
  }

  #admission(decision: Decision): Admission {
    if (!decision.allowed) return { allowed: false, denied: deniedResponse(decision, this.#headers) };
    return {
      allowed: true,
      decision,
      headers: rateLimitHeaders(decision, this.#headers),
      settle: (actual) => this.#limiter.settle(decision, actual),
    };
  }
}

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | undefined)?.then === 'function';

/** The GraphQL descriptors of a unit's priced operations (a lone operation's own, shared). */
function pricedDescriptors(ops: readonly Priced[]): Descriptors {
  const [only] = ops;
  if (ops.length === 1 && only?.ok === true) return only.descriptors;
  return unitDescriptors(ops.flatMap((op) => (op.ok ? [op.descriptors] : [])));
}
