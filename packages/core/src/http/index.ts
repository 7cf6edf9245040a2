export { closest } from '../base/show.js';
export {
  CHALLENGE_ALGORITHM,
  CHALLENGE_HEADER,
  type Challenge,
  type ChallengeOptions,
  challengeHeader,
  issueChallenge,
  PASS_COOKIE,
  PASS_HEADER,
  SOLUTION_COOKIE,
  SOLUTION_HEADER,
  type SolutionRefusal,
  type SolutionVerdict,
  solveChallenge,
  verifySolution,
} from '../escalation/index.js';
export {
  type DeniedBody,
  type DeniedResponse,
  deniedResponse,
  type HeaderFormat,
  type HeaderValues,
  rateLimitHeaders,
  retryAfterSeconds,
} from '../fields/responses.js';
export { constrainsMore, shownResult } from '../fields/shown.js';
export { DEFAULT_IPV6_SUBNET, normalizeIp } from '../net/ip.js';
export {
  type AddressDescriptors,
  buildDescriptors,
  type DescriptorSettings,
  headerApiKey,
  MAX_DESCRIPTOR_LENGTH,
  type RequestFacts,
} from '../request/descriptors.js';
export {
  FetchFacts,
  type ForwardedTrust,
  forwardedTrust,
  requestTarget,
  type TrustProxy,
} from '../request/fetch.js';
export {
  PROXY_NOTICES,
  type ProxyNotice,
  type ProxyTrust,
  proxyNotice,
  settingTrust,
} from '../request/proxy.js';
export { normalizePath, type PathOptions, pathOf, UNMATCHED_ROUTE } from '../request/route.js';
export { afterBodyOf, type RouteOptions, type RouteScope, splitAfterBody } from './afterBody.js';
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
export { PAGE_TYPE, sendChallengePage } from './page.js';
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
export type { OutcomeLimiter, ResponseListener } from './verdict.js';
export { type VerdictIO, type VerdictWriter, verdictWriter } from './writer.js';
