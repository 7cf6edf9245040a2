export { closest } from '../base/show.js';
export { DEFAULT_IPV6_SUBNET, normalizeIp } from '../net/ip.js';
export { afterBodyOf, type RouteOptions, type RouteScope, splitAfterBody } from './afterBody.js';
export {
  CHALLENGE_ALGORITHM,
  type Challenge,
  issueChallenge,
  type SolutionVerdict,
  solveChallenge,
  verifySolution,
} from './challenge.js';
export {
  type ChallengeOptions,
  PASS_COOKIE,
  PASS_HEADER,
  SOLUTION_COOKIE,
  SOLUTION_HEADER,
  type SolutionRefusal,
} from './challengeFlow.js';
export { PAGE_TYPE, sendChallengePage } from './challengePage.js';
export { CHALLENGE_HEADER, challengeHeader } from './challengeResponse.js';
export {
  type AddressDescriptors,
  buildDescriptors,
  type DescriptorSettings,
  headerApiKey,
  MAX_DESCRIPTOR_LENGTH,
  type RequestFacts,
} from './descriptors.js';
export { ExpressFacts, type ExpressRequestFields, expressTrust } from './expressFacts.js';
export {
  FastifyFacts,
  type FastifyRequestFields,
  type FastifyRouteConfig,
  fastifyRouteConfig,
  fastifyTrust,
} from './fastifyFacts.js';
export { FetchFacts, type ForwardedTrust, forwardedTrust, requestTarget, type TrustProxy } from './fetch.js';
export { type FetchFramework, type FetchNext, fetchVerdictWriter } from './fetchWriter.js';
export {
  type AdapterTraits,
  ALL_RULES,
  type CheckScope,
  createHttpLimiter,
  type HttpLimiter,
  type Verdict,
} from './flow.js';
export { type RateLimitInfo, rateLimitInfo } from './info.js';
export { type InlineLimit, inlineRules, isInlineLimit, parseInlineLimit, routeRuleName } from './inline.js';
export { type KoaContextFields, KoaFacts } from './koaFacts.js';
export { isResponseClosed, reportWhenDone, setHeaders, waitUnlessClosed } from './node.js';
export {
  callbackStyle,
  type MiddlewareStyle,
  type NodeFramework,
  nodeVerdictWriter,
  promiseStyle,
} from './nodeWriter.js';
export { ADAPTER_NOTICES, type AdapterNotice } from './notices.js';
export {
  type AdapterObserver,
  type AdapterStage,
  type DescriptorValue,
  type NoticeCode,
  type RateLimitLogger,
  type RateLimitOptions,
  type ResolvedOptions,
  rateLimitOptionsSchema,
  resolveOptions,
} from './options.js';
export { PROXY_NOTICES, type ProxyNotice, type ProxyTrust, proxyNotice, settingTrust } from './proxy.js';
export {
  type DeniedBody,
  type DeniedResponse,
  deniedResponse,
  type HeaderFormat,
  type HeaderValues,
  rateLimitHeaders,
  retryAfterSeconds,
} from './responses.js';
export { normalizePath, type PathOptions, pathOf, UNMATCHED_ROUTE } from './route.js';
export {
  firstScope,
  type LimitedRoute,
  type RateLimitMiddleware,
  type RoutedFramework,
  type RouteMiddlewares,
  type RouteRules,
  routedMiddleware,
} from './routed.js';
export { type RouteNaming, RouteScopes } from './routeScopes.js';
export { DEFAULT_RULES } from './rules-option.js';
export { constrainsMore, shownResult } from './shown.js';
export type { OutcomeLimiter, ResponseListener } from './verdict.js';
export { type VerdictIO, type VerdictWriter, verdictWriter } from './writer.js';
