import { parseArgs } from 'node:util';
import { Conflict, NotFound, ValidationFailed } from '@notify/core';
import { runCommand, UsageError, USAGE, type CommandContext } from './commands';

/** Where the CLI writes: stdout gets results (JSON), stderr gets errors. */
export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

/** An open connection to the record; opened only once the arguments make sense. */
export interface CliSession {
  context: CommandContext;
  close(): Promise<void>;
}

const OPTIONS = {
  name: { type: 'string' },
  email: { type: 'string' },
  timezone: { type: 'string' },
  groups: { type: 'string' },
  rps: { type: 'string' },
  rpm: { type: 'string' },
  quota: { type: 'string' },
  'max-rules': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(argv: readonly string[]) {
  return parseArgs({ args: [...argv], allowPositionals: true, options: OPTIONS });
}

/** Exit codes: 0 done, 1 refused (validation, not found, conflict), 2 usage error. */
export const EXIT = { ok: 0, refused: 1, usage: 2 } as const;

/**
 * Runs the operator CLI for `argv` (without `node` and the script) and returns
 * the exit code. Errors the operator can act on are printed, not thrown; anything
 * else (the database is down, a bug) is thrown for the caller to report.
 */
export async function runCli(argv: readonly string[], output: CliOutput, open: () => Promise<CliSession>): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    // An unknown flag, or a flag without its value.
    output.err(`${(error as Error).message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) {
    output.out(USAGE);
    return EXIT.ok;
  }

  const session = await open();
  try {
    const { help: _help, ...flags } = values;
    output.out(JSON.stringify(await runCommand(session.context, positionals, flags), null, 2));
    return EXIT.ok;
  } catch (error) {
    if (error instanceof ValidationFailed) {
      for (const issue of error.parameters) output.err(`${issue.param}: ${issue.details.join(' ')}`);
      return EXIT.refused;
    }
    if (error instanceof NotFound || error instanceof Conflict) {
      output.err(error.details);
      return EXIT.refused;
    }
    if (error instanceof UsageError) {
      output.err(`${error.message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    throw error;
  } finally {
    await session.close();
  }
}
