export { runCommand, UsageError, USAGE, type CommandContext } from './commands';
