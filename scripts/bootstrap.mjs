#!/usr/bin/env node
// Makes a fresh clone runnable: installs dependencies when the lockfile changed,
// and generates the Prisma client when the schema changed. Plain Node, no
// dependencies, so it can run before `npm install` ever has.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stampFile = join(root, 'node_modules', '.notify-bootstrap.json');

function hashOf(...files) {
  const hash = createHash('sha256');
  for (const file of files) hash.update(existsSync(file) ? readFileSync(file) : '');
  return hash.digest('hex');
}

function run(command, args, env = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) {
    console.error(`bootstrap: \`${command} ${args.join(' ')}\` failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

const stamp = existsSync(stampFile) ? JSON.parse(readFileSync(stampFile, 'utf8')) : {};
const lockHash = hashOf(join(root, 'package.json'), join(root, 'package-lock.json'));
const schemaHash = hashOf(join(root, 'prisma', 'schema.prisma'));
const generatedClient = join(root, 'packages', 'db', 'src', 'generated', 'prisma', 'client.ts');

if (!process.argv.includes('--generate-only') && (stamp.lock !== lockHash || !existsSync(join(root, 'node_modules', '.bin', 'tsx')))) {
  console.error('bootstrap: installing dependencies');
  // A fresh clone gets exactly the lockfile; an existing tree is updated in place
  // (npm ci would delete node_modules under whatever else is running from it).
  const fresh = !existsSync(join(root, 'node_modules')) && existsSync(join(root, 'package-lock.json'));
  // devDependencies too, even under NODE_ENV=production (where npm would leave them out): the
  // Prisma client is generated and the build compiled by them. The built server needs none of them.
  const args = ['--include=dev', '--no-audit', '--no-fund'];
  run('npm', fresh ? ['ci', ...args] : ['install', ...args]);
  stamp.lock = lockHash;
  stamp.schema = undefined;
}

if (stamp.schema !== schemaHash || !existsSync(generatedClient)) {
  console.error('bootstrap: generating the Prisma client');
  // `prisma generate` never runs the schema engine, but the CLI insists that the
  // binary exists and would try to download it; any existing file satisfies it.
  const engine = process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath;
  run(join(root, 'node_modules', '.bin', 'prisma'), ['generate'], { PRISMA_SCHEMA_ENGINE_BINARY: engine, PRISMA_HIDE_UPDATE_MESSAGE: '1' });
  stamp.schema = schemaHash;
}

writeFileSync(stampFile, JSON.stringify(stamp));
