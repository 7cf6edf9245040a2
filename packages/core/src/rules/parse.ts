import {
  type Document,
  isCollection,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
  visit,
  type YAMLError,
} from 'yaml';
import { ConfigError, type RuleProblem, RulesError } from '../base/errors.js';
import { checkOptionNames } from '../base/optionNames.js';
import { formatPath } from '../base/show.js';
import { dayStartMs, utcToday } from './dates.js';
import { maxRulesBytes, readRulesFile, readRulesFileSync, rulesTooLarge } from './file.js';
import type { Finding } from './findings.js';
import type { RuleSpec } from './schema.js';
import { validateRules } from './validate.js';

/** A validated rules file: its rules with defaults filled in, and warnings that did not stop it. */
export interface RulesDocument {
  /** File name or label that problems are reported against. */
  readonly source: string;
  readonly domain: string;
  readonly rules: readonly RuleSpec[];
  /** Overdue reviews, missing owners, expired rules: reported, never thrown. */
  readonly warnings: readonly RuleProblem[];
}

/** Options for parseRules and loadRules. */
export interface ParseOptions {
  /** Name used in problems; loadRules passes the path. Default `<rules>`. */
  readonly source?: string;
  /** `YYYY-MM-DD` against which review dates are judged; defaults to the current UTC date. */
  readonly today?: string;
  /** Largest rules text or file accepted, in bytes (UTF-8); default MAX_RULES_BYTES (16 MiB). */
  readonly maxBytes?: number;
}

/** The names ParseOptions knows, for the did-you-mean of a misspelled one. */
export const PARSE_OPTION_NAMES = ['source', 'today', 'maxBytes'] as const;

// Documents this module validated; compileRules trusts them instead of validating twice. They are frozen, so
// nothing can change them after the check.
const validated = new WeakSet<object>();

/** True for a RulesDocument returned by parseRules or loadRules (already validated, frozen). */
export function isValidatedDocument(value: unknown): value is RulesDocument {
  return typeof value === 'object' && value !== null && validated.has(value);
}

/**
 * Parses and validates a YAML rules file. Throws a RulesError listing every problem with `source:line:column`
 * and the field path; returns warnings (overdue reviews, missing owners) in the document.
 */
export function parseRules(text: string, options: ParseOptions = {}): RulesDocument {
  checkOptionNames('parseRules', options, PARSE_OPTION_NAMES);
  const source = options.source ?? '<rules>';
  const max = maxRulesBytes(options.maxBytes);
  // A UTF-8 character is at most 4 bytes: most texts are judged without counting.
  if (text.length > max / 4) {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > max) throw rulesTooLarge(source, bytes, max);
  }
  const today = options.today ?? utcToday(Date.now());
  if (dayStartMs(today) === undefined)
    throw new ConfigError(`today must be a date (YYYY-MM-DD), got "${today}"`);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const at = (error: YAMLError) => syntaxOffset(doc, text, error);
    throw new RulesError(
      byPosition(doc.errors.map((error) => syntaxProblem(source, lineCounter, at(error), error.message))),
    );
  }
  const result = validateRules(doc.toJS({ maxAliasCount: 100 }), today);
  const place = (finding: Finding) => placeFinding(source, finding, locate(doc, lineCounter, finding));
  if (!result.value) throw new RulesError(byPosition(result.errors.map(place)));
  const document: RulesDocument = {
    source,
    domain: result.value.domain,
    rules: result.value.rules,
    warnings: byPosition(result.warnings.map(place)),
  };
  validated.add(deepFreeze(document));
  return document;
}

/**
 * Reads and parses a rules file; problems name the path as given. A file over `maxBytes` (default
 * MAX_RULES_BYTES) is refused unread, by its size; a missing one rejects with the fs error (ENOENT), naming the working directory for a relative path.
 */
export async function loadRules(
  path: string,
  options: Omit<ParseOptions, 'source'> = {},
): Promise<RulesDocument> {
  checkOptionNames('loadRules', options, PARSE_OPTION_NAMES);
  const text = await readRulesFile(path, maxRulesBytes(options.maxBytes));
  return parseRules(text, { ...options, source: path });
}

/** loadRules for synchronous start-up code (a constructor that cannot await). */
export function loadRulesSync(path: string, options: Omit<ParseOptions, 'source'> = {}): RulesDocument {
  checkOptionNames('loadRulesSync', options, PARSE_OPTION_NAMES);
  return parseRules(readRulesFileSync(path, maxRulesBytes(options.maxBytes)), { ...options, source: path });
}

/** Places a finding at a position; exported for compileRules, which has no positions (line 0). */
export function placeFinding(
  source: string,
  finding: Finding,
  position: { line: number; column: number } = { line: 0, column: 0 },
): RuleProblem {
  return { source, ...position, path: formatPath(finding.path), message: finding.message };
}

function syntaxProblem(
  source: string,
  lineCounter: LineCounter,
  offset: number,
  message: string,
): RuleProblem {
  const { line, col } = lineCounter.linePos(offset);
  // yaml appends "at line L, column C" (and sometimes a code frame); the position already says it.
  const text = message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? message;
  return { source, line, column: col, path: '', message: `YAML: ${text}` };
}

/**
 * Where the text a YAML error is about starts. yaml points an unclosed quote or flow collection at the end, where
 * the closer is missing, and a bad indentation at the line's first space; the author looks for the opening quote
 * or bracket, or the misplaced key.
 */
function syntaxOffset(doc: Document, text: string, error: YAMLError): number {
  const [offset] = error.pos;
  const unclosed = /quote/.test(error.message)
    ? (node: Node) => isScalar(node) && (node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE')
    : /end with/.test(error.message)
      ? (node: Node) => isCollection(node) && node.flow === true
      : undefined;
  if (unclosed) {
    let opener: number | undefined;
    visit(doc, (_, node) => {
      const range = (node as Node).range;
      // The innermost (latest opening) node of that kind running up to the error.
      if (range && unclosed(node as Node) && range[0] < offset && offset <= range[2]) opener = range[0];
    });
    if (opener !== undefined) return opener;
  }
  let at = offset;
  while (text[at] === ' ') at++;
  return at;
}

/**
 * The position of a finding: the node at its path (its key for unknown fields), or the deepest node that exists
 * when the path ends at a missing field (the map that lacks it).
 */
function locate(doc: Document, lineCounter: LineCounter, finding: Finding): { line: number; column: number } {
  return yamlPosition(doc, lineCounter, finding.path, finding.atKey);
}

/**
 * Line and column (1-based) of the node at `path` in a parsed YAML document (its key with `atKey`), or of the
 * deepest node that exists when the path goes further; 0:0 when nothing of it does. For other YAML files
 * than rules (the CLI's test cases) whose problems should name a line too.
 */
export function yamlPosition(
  doc: Document,
  lineCounter: LineCounter,
  path: readonly PropertyKey[],
  atKey = false,
): { line: number; column: number } {
  let node: unknown = doc.contents;
  let keyNode: Node | undefined;
  for (const segment of path) {
    if (typeof segment === 'symbol') break;
    const next = child(node, segment);
    if (!next) break;
    [node, keyNode] = [next.value ?? next.key, next.key];
  }
  const target = (atKey && keyNode) || (node as Node | null) || keyNode;
  const offset = target?.range?.[0];
  if (offset === undefined) return { line: 0, column: 0 };
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

function child(node: unknown, segment: string | number): { key?: Node; value: Node | null } | undefined {
  if (isSeq(node) && typeof segment === 'number') {
    const item = node.items[segment];
    return item === undefined ? undefined : { value: item as Node | null };
  }
  if (!isMap(node)) return undefined;
  for (const pair of node.items) {
    if (isPair(pair) && isScalar(pair.key) && String(pair.key.value) === String(segment)) {
      return { key: pair.key, value: pair.value as Node | null };
    }
  }
  return undefined;
}

/** Problems in reading order: by line, then column (stable otherwise). */
function byPosition(problems: RuleProblem[]): RuleProblem[] {
  return problems.sort((a, b) => a.line - b.line || a.column - b.column);
}

/** Freezes an object graph of plain objects and arrays. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
