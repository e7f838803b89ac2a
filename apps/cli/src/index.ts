export { runCommand, UsageError, USAGE, type CommandContext } from './commands';
export { runCli, EXIT, type CliOutput, type CliSession } from './cli';
