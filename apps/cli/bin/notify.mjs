#!/usr/bin/env node
// The `notify` command (`npx notify …`): runs the built CLI, apps/cli/dist/main.js. Plain
// JavaScript that exists before any build, so npm links it at install time.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('notify: the CLI is not built yet: run `npm run build` (or, from the sources, `npm run cli -- …`)');
  process.exit(1);
}
// Stack traces name the TypeScript sources (the build writes source maps beside the JavaScript).
process.setSourceMapsEnabled(true);
await import(main.href);
