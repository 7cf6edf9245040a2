import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '@sluice/core';
import { type HeaderFormat, resolveOptions } from '@sluice/core/http';
import { type ParsedArgs, parseCommandArgs, stringOption } from '../args.js';
import { type Command, describeFsError, EXIT, UsageError } from '../io.js';
import { limitsHtml } from '../publicDocs/html.js';
import { hiddenRules } from '../publicDocs/limits.js';
import { limitsMarkdown } from '../publicDocs/markdown.js';
import { limitsPage } from '../publicDocs/page.js';
import { countOf, formatHelp, formatOption, loadChecked } from '../rulesFile.js';

/** `--headers`: the adapter's `headers` option, checked as the adapters check it. */
export function headersOption(parsed: ParsedArgs): HeaderFormat {
  const headers = (stringOption(parsed, 'headers') ?? 'draft') as HeaderFormat;
  try {
    resolveOptions({ headers });
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`--headers: ${error.message}`);
    throw error;
  }
  return headers;
}

/** The `--headers` help line, its text at `width`. */
export const headersHelp = (width: number): string =>
  `${'--headers <form>'.padEnd(width)}the header form your adapters send (their headers option): draft (default),\n${' '.repeat(width + 2)}draft-7, draft-6, legacy, draft-7+legacy, both, ...`;

/** `sluice docs <rules.yaml> [--out DIR]`: the limits page an API's users read, in Markdown and HTML. */
export const docsCommand: Command = {
  name: 'docs',
  summary: "write the public limits page (Markdown and one self-contained HTML file) for your API's users",
  help: `Usage: sluice docs <rules.yaml> [--out <dir>] [--headers <form>] [--base-url <url>]

Writes limits.md and limits.html (one self-contained page: no script, nothing fetched) into the
directory: the public limits per audience (plan, tenant, authentication), route and method, what they are
counted per, the limit and window, the headers responses carry and what they mean, a 429 and a 503 as the
limiter sends them (made by Sluice's own HTTP layer, not written by hand), and how to back off with jitter
in curl, JavaScript and Python. Rules marked public: false, shadow rules and deny/allow rules stay out.

Example:
  sluice docs rules.yaml --out site/limits --base-url https://api.example.com

Options:
  --out <dir>         where to write limits.md and limits.html; default the current directory
  ${headersHelp(18)}
  --base-url <url>    the API's address, for the backoff examples; default https://api.example.com
  ${formatHelp(20)}
  -h, --help          show this help

Exit codes: 0 written, 1 invalid rules, 2 usage error, unreadable file or a directory that cannot be written.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
      out: { type: 'string' },
      headers: { type: 'string' },
      'base-url': { type: 'string' },
      format: { type: 'string' },
    });
    const [file, ...extra] = parsed.positionals;
    if (file === undefined || extra.length > 0) throw new UsageError('docs takes one rules file');
    const headers = headersOption(parsed);
    const baseUrl = stringOption(parsed, 'base-url') ?? 'https://api.example.com';
    if (!URL.canParse(baseUrl)) throw new UsageError(`--base-url must be a URL, got "${baseUrl}"`);
    const loaded = await loadChecked(file, io, undefined, formatOption(stringOption(parsed, 'format')));
    if (typeof loaded === 'number') return loaded;
    const page = await limitsPage(loaded.rules, hiddenRules(loaded.document), headers, baseUrl);
    const out = stringOption(parsed, 'out') ?? '.';
    const written = [join(out, 'limits.md'), join(out, 'limits.html')];
    try {
      await mkdir(out, { recursive: true });
      await writeFile(written[0]!, limitsMarkdown(page));
      await writeFile(written[1]!, limitsHtml(page));
    } catch (error) {
      io.err(describeFsError(out, error));
      return EXIT.usage;
    }
    const left = loaded.rules.rules.length - page.limits.length;
    io.out(
      `${written.join(' and ')}: ${countOf(page.limits.length, 'public limit')} of ${page.domain} ` +
        `version ${page.version} (${countOf(left, 'rule')} left out: not public, shadow, deny or allow)`,
    );
    return EXIT.ok;
  },
};
