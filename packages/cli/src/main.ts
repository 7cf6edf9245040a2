import { unknownName } from '@sluice/core';
import { auditCommand } from './commands/audit.js';
import { capacityCommand } from './commands/capacity.js';
import { dashboardCommand } from './commands/dashboard.js';
import { docsCommand } from './commands/docs.js';
import { explainCommand } from './commands/explain.js';
import { migrateCommand } from './commands/migrate.js';
import { openapiCommand } from './commands/openapi.js';
import { testCommand } from './commands/policyTest.js';
import { pushCommand } from './commands/push.js';
import { replayCommand } from './commands/replay.js';
import { reportCommand } from './commands/report.js';
import { rlsCommand } from './commands/rls.js';
import { simulateCommand } from './commands/simulate.js';
import { topCommand } from './commands/top.js';
import { unbanCommand } from './commands/unban.js';
import { validateCommand } from './commands/validate.js';
import { type Command, EXIT, type ExitCode, type Io, UsageError } from './io.js';

const COMMANDS: readonly Command[] = [
  validateCommand,
  explainCommand,
  testCommand,
  reportCommand,
  replayCommand,
  simulateCommand,
  capacityCommand,
  pushCommand,
  unbanCommand,
  auditCommand,
  docsCommand,
  openapiCommand,
  topCommand,
  dashboardCommand,
  migrateCommand,
  rlsCommand,
];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: sluice <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run `sluice <command> --help` for a command's options.",
    '',
    'Exit codes: 0 ok; 1 findings (invalid rules, failed cases, a failed push); 2 usage error or unreadable file.',
  ].join('\n');
}

/** Runs the `sluice` command line with these arguments; returns the exit code. */
export async function main(argv: readonly string[], io: Io): Promise<ExitCode> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.err : io.out)(usage());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    const names = COMMANDS.map((c) => c.name);
    io.err(`sluice: ${unknownName(name, names, { kind: 'command', listKnown: true })}`);
    io.err('Run `sluice --help` for what each command does.');
    return EXIT.usage;
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.out(command.help);
    return EXIT.ok;
  }
  try {
    return await command.run(args, io);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`sluice ${command.name}: ${error.message}`);
    io.err(command.help.split('\n')[0] ?? '');
    return EXIT.usage;
  }
}
