import { formatProblem } from '@sluice/core';
import { dateOption, parseCommandArgs } from '../args.js';
import { type Command, EXIT, type ExitCode, UsageError } from '../io.js';
import { countOf, loadChecked } from '../rulesFile.js';

/** `sluice validate <file>...`: every error with file:line:column; warnings printed without failing. */
export const validateCommand: Command = {
  name: 'validate',
  summary:
    'check rules files: every error with file:line:column; overdue reviews and missing owners as warnings',
  help: `Usage: sluice validate <rules.yaml>... [--today YYYY-MM-DD]

Validates and compiles each rules file. Errors (YAML syntax, unknown fields, bad durations, duplicate names,
dangling or cyclic overrides, zero limits without expiry, ...) are printed as file:line:column path: message,
all of them, not only the first. Warnings (overdue reviews, missing owners, expired rules) are printed too but
do not fail the command.

Options:
  --today YYYY-MM-DD   judge review dates against this day instead of today (UTC)
  -h, --help           show this help

Exit codes: 0 valid (warnings allowed), 1 invalid rules, 2 usage error or unreadable file.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, { today: { type: 'string' } });
    if (parsed.positionals.length === 0) throw new UsageError('validate needs at least one rules file');
    const today = dateOption(parsed, 'today');
    let code: ExitCode = EXIT.ok;
    for (const path of parsed.positionals) {
      const loaded = await loadChecked(path, io, today);
      if (typeof loaded === 'number') {
        code = Math.max(code, loaded) as ExitCode;
        continue;
      }
      const { document, rules } = loaded;
      for (const warning of document.warnings) {
        io.err(formatProblem({ ...warning, message: `warning: ${warning.message}` }));
      }
      const warnings =
        document.warnings.length > 0 ? `, ${countOf(document.warnings.length, 'warning')}` : '';
      io.out(
        `${path}: ok, domain ${rules.domain}, version ${rules.version}, ${countOf(rules.rules.length, 'rule')}${warnings}`,
      );
    }
    return code;
  },
};
