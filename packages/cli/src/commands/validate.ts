import { formatProblem } from '@sluice/core';
import { dateOption, parseCommandArgs } from '../args.js';
import { type Command, EXIT, type ExitCode, UsageError } from '../io.js';
import { countOf, formatHelp, formatOption, type LoadedRules, loadChecked } from '../rulesFile.js';

/** `sluice validate <file>...`: every error with file:line:column; warnings printed without failing. */
export const validateCommand: Command = {
  name: 'validate',
  summary:
    'check rules files: every error with file:line:column; overdue reviews and missing owners as warnings',
  help: `Usage: sluice validate <rules.yaml>... [--today YYYY-MM-DD] [--format sluice|envoy|auto]

Validates and compiles each rules file. Errors (YAML syntax, unknown fields, bad durations, duplicate names,
dangling or cyclic overrides, zero limits without expiry, ...) are printed as file:line:column path: message,
all of them, not only the first. Warnings (overdue reviews, missing owners, expired rules) are printed too but
do not fail the command. An envoyproxy/ratelimit config file (domain and nested descriptors) is read as such
and converted, each problem named by file:line:column and field.

Options:
  --today YYYY-MM-DD   judge review dates against this day instead of today (UTC)
  ${formatHelp(23)}
  -h, --help           show this help

Exit codes: 0 valid (warnings allowed), 1 invalid rules, 2 usage error or unreadable file.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, { today: { type: 'string' }, format: { type: 'string' } });
    if (parsed.positionals.length === 0) throw new UsageError('validate needs at least one rules file');
    const today = dateOption(parsed, 'today');
    const format = formatOption(parsed.values.format as string | undefined);
    let code: ExitCode = EXIT.ok;
    for (const path of parsed.positionals) {
      const loaded = await loadChecked(path, io, today, format);
      if (typeof loaded === 'number') {
        code = Math.max(code, loaded) as ExitCode;
        continue;
      }
      const found = loaded.document?.warnings ?? [];
      for (const warning of found) {
        io.err(formatProblem({ ...warning, message: `warning: ${warning.message}` }));
      }
      const warnings = found.length > 0 ? `, ${countOf(found.length, 'warning')}` : '';
      io.out(`${path}: ok${formatNote(loaded)}, ${tableSummary(loaded)}${warnings}`);
    }
    return code;
  },
};

/** ` (envoyproxy/ratelimit config)` for Envoy's format, nothing for Sluice's. */
const formatNote = (loaded: LoadedRules): string =>
  loaded.format === 'envoy' ? ' (envoyproxy/ratelimit config)' : '';

/** `domain d, version v, 3 rules[, 1 rule with replaces]`. */
function tableSummary({ rules, replaces }: LoadedRules): string {
  const replacing = replaces.size > 0 ? `, ${countOf(replaces.size, 'rule')} with replaces` : '';
  return `domain ${rules.domain}, version ${rules.version}, ${countOf(rules.rules.length, 'rule')}${replacing}`;
}
