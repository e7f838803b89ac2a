#!/bin/sh
# `npm start`. With NODE_ENV=production: install what the build needs (devDependencies included:
# the compiler and Prisma's generator), build when the sources changed, and run the built server
# with plain node. Otherwise the development path: the sources through tsx, no build.
# `exec` here and in package.json (`exec sh scripts/start.sh`): npm's own `sh -c` and this script
# become the server, so the SIGTERM that npm passes on to its child reaches the server itself (a shell
# in between would die of it and leave the server running).
set -e
cd "$(dirname "$0")/.."
node scripts/bootstrap.mjs
if [ "${NODE_ENV:-}" = production ]; then
  node scripts/build.mjs --if-changed
  exec node --enable-source-maps apps/server/dist/main.js
fi
exec node_modules/.bin/tsx --conditions=@notify/source apps/server/src/main.ts
