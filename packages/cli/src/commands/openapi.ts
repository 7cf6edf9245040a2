import { writeFile } from 'node:fs/promises';
import { parseDocument, stringify } from 'yaml';
import { parseCommandArgs, stringOption } from '../args.js';
import {
  type Command,
  describeFsError,
  EXIT,
  type ExitCode,
  type Io,
  readTextFile,
  UsageError,
} from '../io.js';
import { hiddenRules } from '../publicDocs/limits.js';
import { addLimits, type OpenApiResult } from '../publicDocs/openapi.js';
import { limitsPage } from '../publicDocs/page.js';
import { countOf, formatHelp, formatOption, loadChecked } from '../rulesFile.js';
import { headersHelp, headersOption } from './docs.js';

type Json = Record<string, unknown>;

/** What the command takes of @seriousme/openapi-schema-validator (loaded by a name tsc does not resolve). */
interface ValidatorModule {
  Validator: new () => {
    validate(spec: Json): Promise<{ valid: boolean; errors?: unknown }>;
    resolveRefs(options?: { specification?: Json }): Json;
    readonly version: string;
  };
}
const VALIDATOR_PACKAGE = '@seriousme/openapi-schema-validator';

/** The validator, or undefined (said on stderr, with how to install it) when it is not installed. */
async function loadValidator(io: Io): Promise<ValidatorModule | undefined> {
  try {
    return (await import(VALIDATOR_PACKAGE)) as ValidatorModule;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    io.err(`openapi needs ${VALIDATOR_PACKAGE}; install it with: npm install ${VALIDATOR_PACKAGE}`);
    return undefined;
  }
}

/**
 * Problems of a document as OpenAPI 3 (its schema, and that every internal $ref resolves), one line each; empty
 * when it is valid.
 */
export async function openApiProblems(validators: ValidatorModule, document: Json): Promise<string[]> {
  const validator = new validators.Validator();
  const result = await validator.validate(structuredClone(document));
  if (!result.valid) {
    const errors = Array.isArray(result.errors) ? result.errors : [result.errors];
    return errors.map((error) => (typeof error === 'string' ? error : JSON.stringify(error)));
  }
  if (!validator.version.startsWith('3.')) return [`OpenAPI ${validator.version}: only OpenAPI 3 is read`];
  try {
    validator.resolveRefs();
    return [];
  } catch (error) {
    return [`a $ref does not resolve: ${error instanceof Error ? error.message : String(error)}`];
  }
}

/** The document as it was written (JSON or YAML), or an exit code once said why not. */
async function readSpec(path: string, io: Io): Promise<{ document: Json; json: boolean } | ExitCode> {
  const text = await readTextFile(path, io);
  if (typeof text === 'number') return text;
  const parsed = parseDocument(text);
  const document = parsed.toJS() as unknown;
  if (
    parsed.errors.length > 0 ||
    document === null ||
    typeof document !== 'object' ||
    Array.isArray(document)
  ) {
    io.err(`${path}: not a JSON or YAML object${parsed.errors[0] ? `: ${parsed.errors[0].message}` : ''}`);
    return EXIT.usage;
  }
  return { document: document as Json, json: text.trimStart().startsWith('{') };
}

/** What was added and what was not, on stderr. */
function report(result: OpenApiResult, io: Io): void {
  for (const [operation, rules] of result.operations) io.err(`  ${operation}: ${rules.join(', ')}`);
  if (result.unmatched.length > 0)
    io.err(`no operation matches the routes of: ${result.unmatched.join(', ')} (see --base-path)`);
  if (result.listed.length > 0)
    io.err(`left out, their routes or methods come from a list: ${result.listed.join(', ')}`);
  for (const kept of result.kept) io.err(`kept the document's own ${kept} response`);
}

/** `sluice openapi <rules.yaml> --spec <openapi.yaml> [--out FILE]`: the limits in the API's OpenAPI document. */
export const openapiCommand: Command = {
  name: 'openapi',
  summary: 'add the public limits to an OpenAPI 3 document: 429 (and 503) responses, headers, x-ratelimit',
  help: `Usage: sluice openapi <rules.yaml> --spec <openapi.yaml|json> [--out <file>] [--headers <form>]
       [--base-path <path>]

Adds the public limits of the rules to each operation of the OpenAPI 3 document whose path and method
they match (a rule without a route matches every path, one without a method every method): a 429
response with the rate-limit headers and the limiter's JSON body, a 503 when a limit of the operation
fails closed, the RateLimit fields on its success responses, and an x-ratelimit extension listing its
limits (name, audience, limit, window, what it is counted per, the RateLimit-Policy sent). Headers and
examples are the limiter's own responses. Rules marked public: false, shadow rules and deny/allow rules
stay out. The document is checked as OpenAPI before and after (@seriousme/openapi-schema-validator).

Example:
  sluice openapi rules.yaml --spec openapi.yaml --out openapi.limits.yaml

Options:
  --spec <file>       the OpenAPI 3.0 or 3.1 document, YAML or JSON (required)
  --out <file>        where to write it: .json writes JSON, else YAML; default stdout, as the spec was
  ${headersHelp(18)}
  --base-path <path>  what the routes your app sees add before the document's paths (a server's /v1)
  ${formatHelp(20)}
  -h, --help          show this help

Exit codes: 0 written, 1 invalid rules or a document that is not valid OpenAPI 3 (before or after), 2 usage
error, an unreadable file, or the validator not installed.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
      spec: { type: 'string' },
      out: { type: 'string' },
      headers: { type: 'string' },
      'base-path': { type: 'string' },
      format: { type: 'string' },
    });
    const [file, ...extra] = parsed.positionals;
    if (file === undefined || extra.length > 0) throw new UsageError('openapi takes one rules file');
    const specPath = stringOption(parsed, 'spec');
    if (specPath === undefined) throw new UsageError('openapi needs --spec <openapi.yaml>');
    const basePath = stringOption(parsed, 'base-path') ?? '';
    if (basePath !== '' && !basePath.startsWith('/')) throw new UsageError('--base-path must start with /');
    const headers = headersOption(parsed);
    const validators = await loadValidator(io);
    if (validators === undefined) return EXIT.usage;
    const loaded = await loadChecked(file, io, undefined, formatOption(stringOption(parsed, 'format')));
    if (typeof loaded === 'number') return loaded;
    const spec = await readSpec(specPath, io);
    if (typeof spec === 'number') return spec;
    const before = await openApiProblems(validators, spec.document);
    if (before.length > 0) {
      for (const problem of before) io.err(`${specPath}: ${problem}`);
      io.err(`${specPath}: not a valid OpenAPI 3 document; nothing written`);
      return EXIT.findings;
    }
    const page = await limitsPage(
      loaded.rules,
      hiddenRules(loaded.document),
      headers,
      'https://api.example.com',
    );
    const result = addLimits(spec.document, page, basePath);
    const after = await openApiProblems(validators, result.document);
    if (after.length > 0) {
      for (const problem of after) io.err(`output: ${problem}`);
      io.err('the document with the limits is not valid OpenAPI: nothing written (a bug: please report it)');
      return EXIT.findings;
    }
    const out = stringOption(parsed, 'out');
    const json = out === undefined ? spec.json : out.endsWith('.json');
    const text = json
      ? `${JSON.stringify(result.document, null, 2)}\n`
      : stringify(result.document, { lineWidth: 0, aliasDuplicateObjects: false });
    if (out === undefined) io.out(text.trimEnd());
    else {
      try {
        await writeFile(out, text);
      } catch (error) {
        io.err(describeFsError(out, error));
        return EXIT.usage;
      }
    }
    io.err(
      `${out ?? 'stdout'}: ${countOf(page.limits.length, 'public limit')} of ${page.domain} on ` +
        `${countOf(result.operations.size, 'operation')}; valid OpenAPI`,
    );
    report(result, io);
    return EXIT.ok;
  },
};
