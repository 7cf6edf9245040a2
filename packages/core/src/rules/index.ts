export { parseDuration } from '../base/duration.js';
export { type CompileOptions, compileRules, type RulesInput } from './compile.js';
export { MAX_RULES_BYTES } from './file.js';
export {
  loadRules,
  loadRulesSync,
  type ParseOptions,
  parseRules,
  type RulesDocument,
  yamlPosition,
} from './parse.js';
export {
  isCompiledRules,
  isRulesSource,
  type ResolveOptions,
  type RulesLike,
  resolveRules,
  resolveRulesSync,
} from './resolve.js';
export {
  ALGORITHMS,
  type LimitSpec,
  MAX_NAME_LENGTH,
  type ParsedRule,
  type RuleSpec,
  ruleSchema,
  rulesFileSchema,
} from './schema.js';
