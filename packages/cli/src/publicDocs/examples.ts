/**
 * Example responses of a public limit, made by the code that answers real requests: core's HTTP flow and its
 * fetch verdict writer (the layer @sluice/hono serves from), over a one-rule table, so that the page never shows
 * a header or a body the limiter would not send.
 */
import { type CompiledRule, compileRules, type RuleSpec, StoreError } from '@sluice/core';
import {
  createHttpLimiter,
  FetchFacts,
  type FetchFramework,
  fetchVerdictWriter,
  type HeaderFormat,
  type RateLimitOptions,
} from '@sluice/core/http';
import { descriptorOf, type Store } from '@sluice/core/store';
import { formatDuration } from '../rulesFile.js';

/** One response as a client sees it. */
export interface SampleResponse {
  readonly status: number;
  /** Header names as the fields name them (HTTP names are case-insensitive; the Fetch API lowers them). */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
}

/** What a client of one limit sees: a response within it, the 429 past it, and the 503 when counting fails. */
export interface LimitSamples {
  readonly allowed: SampleResponse;
  readonly denied: SampleResponse;
  readonly unavailable: SampleResponse;
}

/** The examples' clock: a fixed time, so that a page made twice is the same page. */
export const SAMPLE_TIME = Date.parse('2030-01-01T00:00:00Z');

interface Exchange {
  readonly req: Request;
  res: Response;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** `ratelimit-policy` as the fields write it: `RateLimit-Policy`. */
function fieldName(lower: string): string {
  return lower
    .split('-')
    .map((part) => (part === 'ratelimit' ? 'RateLimit' : part.charAt(0).toUpperCase() + part.slice(1)))
    .join('-');
}

/** A response as its status line, headers and body would be read off the wire. */
export function httpText(response: SampleResponse): string {
  const head = [`HTTP/1.1 ${response.status} ${STATUS_TEXT[response.status] ?? ''}`.trimEnd()];
  for (const [name, value] of response.headers) head.push(`${name}: ${value}`);
  return response.body === '' ? head.join('\n') : `${head.join('\n')}\n\n${response.body}`;
}

/** A compiled rule's limit as a rules file writes it. */
function limitSpec(rule: CompiledRule): RuleSpec['limit'] {
  const { limit, windowMs, burst, period } = rule.params;
  if (descriptorOf(rule.algorithm).limit === 'concurrent')
    return { concurrent: limit, lease: formatDuration(windowMs) };
  return { requests: limit, per: period ?? formatDuration(windowMs), ...(burst === limit ? {} : { burst }) };
}

/**
 * The one-rule table of an example: the rule's counting alone, failing closed (its policies are described in
 * words), so that an example of any rule written in either format (Sluice's, Envoy's) can be made.
 */
function exampleRule(rule: CompiledRule): RuleSpec {
  return {
    name: rule.name,
    key: [...rule.key],
    global: rule.global,
    algorithm: rule.algorithm,
    limit: limitSpec(rule),
    on_store_error: 'deny',
  };
}

/** A store that cannot be reached: every call fails, as during an outage. */
const DOWN: Store = {
  evaluate: () => Promise.reject(new StoreError('ERR_SLUICE_STORE', 'connection refused')),
  release: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

const facts = (request: Request) => new FetchFacts(request, '203.0.113.7', 'none');

/** A flow and its writer for one table, answering requests in process. */
function exchangeWith(rule: CompiledRule, format: HeaderFormat, store?: Store) {
  const values = Object.fromEntries(rule.key.map((name) => [name, `example-${name}`]));
  let cost = 1;
  const options: RateLimitOptions<Exchange> = {
    rules: compileRules({ domain: 'example', rules: [exampleRule(rule)] }),
    headers: format,
    clock: () => SAMPLE_TIME,
    descriptors: () => values,
    cost: () => cost,
    logger: { warn: () => {} },
    silence: ['SLUICE_UNVALIDATED_API_KEY', 'SLUICE_STORE_SHARED'],
    ...(store === undefined ? {} : { store, timeoutMs: 50 }),
  };
  const http = createHttpLimiter<Exchange, RateLimitOptions<Exchange>>(options);
  const framework: FetchFramework<Exchange> = {
    request: (c) => c.req,
    response: (c) => c.res,
    sent: () => false,
    nodeResponse: () => undefined,
    setInfo: () => {},
    onDenied: undefined,
    json: (c, body, status) => {
      const headers = new Headers(c.res.headers);
      headers.set('Content-Type', 'application/json');
      return new Response(JSON.stringify(body), { status, headers });
    },
  };
  const act = fetchVerdictWriter<Exchange, () => Promise<unknown>>(framework, http.report);
  /** One request of `units`; resolves with the response, the handler's own answer when allowed. */
  async function send(units: number): Promise<SampleResponse> {
    cost = units;
    const c: Exchange = { req: new Request('http://api.example/'), res: new Response('{"ok":true}') };
    c.res.headers.set('Content-Type', 'application/json');
    const verdict = await http.check(c, facts(c.req));
    // The handler runs on (a concurrency lease stays held, a leaky_bucket place taken): the response it
    // holds carries the fields the writer set before handing over.
    const answered = act(c, c, () => new Promise(() => {}), verdict);
    if (verdict.action === 'allow') return sampled(c.res);
    return sampled((await answered) ?? c.res);
  }
  return { send, close: () => http.limiter.close() };
}

async function sampled(response: Response): Promise<SampleResponse> {
  const headers = [...response.headers.entries()].map(([name, value]) => [fieldName(name), value] as const);
  return { status: response.status, headers, body: await response.text() };
}

/**
 * The three responses of a limit: the first request of a key (its whole limit spent at once), the next one
 * (the 429), and one while the store cannot be reached on a rule that fails closed (the 503).
 */
export async function limitSamples(rule: CompiledRule, format: HeaderFormat): Promise<LimitSamples> {
  const counting = exchangeWith(rule, format);
  const outage = exchangeWith(rule, format, DOWN);
  try {
    const allowed = await counting.send(rule.params.burst);
    const denied = await counting.send(1);
    const unavailable = await outage.send(1);
    return { allowed, denied, unavailable };
  } finally {
    await Promise.all([counting.close(), outage.close()]);
  }
}
