#!/usr/bin/env node
// `npm run build`: type-checks every app and package and compiles each workspace's src/ to dist/
// (JavaScript, source maps beside it), then copies the files of src/ that are not TypeScript
// (the console's html/js/css). The TypeScript compiler's own API, not `tsc` itself, because the
// sources import each other without extensions (`./client`, `../scopes`), as `moduleResolution:
// bundler` lets them, and Node's ESM loader needs the file: a transformer running inside the emit
// writes the specifier TypeScript itself resolved (`./client.js`, `../scopes/index.js`), so the
// source maps stay exact. Workspace packages reach each other through their package.json
// `exports`: `@notify/source` → src/*.ts (tsx, vitest, typecheck), `default` → dist/*.js (node).
//
//   node scripts/build.mjs               build (fails on a type error)
//   node scripts/build.mjs --if-changed  build only when sources changed since the last build
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stampFile = join(root, 'node_modules', '.notify-build.json');
const started = Date.now();

const workspaces = ['apps', 'packages'].flatMap((group) =>
  readdirSync(join(root, group), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, group, entry.name, 'src')))
    .map((entry) => join(root, group, entry.name)),
);

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path) : [path];
  });
}

/** Everything a build reads: sources, configuration, manifests, the Prisma schema (generated client). */
function inputsHash() {
  const hash = createHash('sha256');
  const files = [
    ...workspaces.flatMap((ws) => [join(ws, 'package.json'), ...walk(join(ws, 'src'))]),
    join(root, 'tsconfig.json'),
    join(root, 'tsconfig.build.json'),
    join(root, 'package-lock.json'),
    fileURLToPath(import.meta.url),
  ];
  for (const file of files.sort()) {
    hash.update(relative(root, file));
    hash.update(existsSync(file) ? readFileSync(file) : '');
  }
  return hash.digest('hex');
}

// Every workspace package must offer both sides, or node would be sent to a .ts file it cannot load.
const badExports = workspaces.filter((ws) => {
  const entry = JSON.parse(readFileSync(join(ws, 'package.json'), 'utf8')).exports?.['.'];
  return entry?.['@notify/source'] !== './src/index.ts' || entry?.default !== './dist/index.js';
});
if (badExports.length > 0) {
  console.error(`build: these packages must export { ".": { "@notify/source": "./src/index.ts", "default": "./dist/index.js" } }:`);
  for (const ws of badExports) console.error(`  ${relative(root, join(ws, 'package.json'))}`);
  process.exit(1);
}

const ifChanged = process.argv.includes('--if-changed');
const hash = inputsHash();
if (ifChanged && existsSync(stampFile) && JSON.parse(readFileSync(stampFile, 'utf8')).hash === hash) {
  if (workspaces.every((ws) => existsSync(join(ws, 'dist')))) {
    console.error('build: up to date');
    process.exit(0);
  }
}

const configPath = join(root, 'tsconfig.build.json');
const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) });
if (parsed.errors.length > 0) fail(parsed.errors);
const options = parsed.options;
const host = ts.createCompilerHost(options);
const program = ts.createProgram({ rootNames: parsed.fileNames, options, host, configFileParsingDiagnostics: parsed.errors });

function fail(diagnostics) {
  const formatHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' };
  console.error(ts.formatDiagnosticsWithColorAndContext(diagnostics, formatHost));
  console.error(`build: failed (${diagnostics.length} problem${diagnostics.length === 1 ? '' : 's'})`);
  process.exit(1);
}

const diagnostics = ts.getPreEmitDiagnostics(program);
if (diagnostics.length > 0) fail(diagnostics);

/** <workspace>/src/a/b.ts → <workspace>/dist/a/b.js: the workspace of a path under some src/. */
function distPath(file) {
  for (const ws of workspaces) {
    const src = join(ws, 'src') + sep;
    if (file.startsWith(src)) return join(ws, 'dist', file.slice(src.length));
  }
  throw new Error(`build: ${relative(root, file)} is not under any workspace's src/`);
}

const KNOWN_EXTENSION = /\.(?:m?js|cjs|json|node)$/;

/** The specifier Node needs for what TypeScript resolved `specifier` to from `fromFile`. */
function runtimeSpecifier(specifier, fromFile) {
  if (!specifier.startsWith('.') || KNOWN_EXTENSION.test(specifier)) return specifier;
  const resolved = ts.resolveModuleName(specifier, fromFile, options, host).resolvedModule;
  if (!resolved || !/\.m?ts$/.test(resolved.resolvedFileName) || resolved.resolvedFileName.endsWith('.d.ts')) {
    throw new Error(`build: cannot resolve '${specifier}' from ${relative(root, fromFile)} to a TypeScript source`);
  }
  let path = relative(dirname(fromFile), resolved.resolvedFileName).split(sep).join('/').replace(/\.(m?)ts$/, '.$1js');
  if (!path.startsWith('.')) path = `./${path}`;
  return path;
}

/** Runs after TypeScript's own transforms (type-only imports are gone by then). */
const rewriteSpecifiers = (context) => (sourceFile) => {
  const { factory } = context;
  const literal = (node) => ts.setTextRange(factory.createStringLiteral(runtimeSpecifier(node.text, sourceFile.fileName)), node);
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      return factory.updateImportDeclaration(node, node.modifiers, node.importClause, literal(node.moduleSpecifier), node.attributes);
    }
    if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      return factory.updateExportDeclaration(node, node.modifiers, node.isTypeOnly, node.exportClause, literal(node.moduleSpecifier), node.attributes);
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments.length >= 1 && ts.isStringLiteral(node.arguments[0])) {
      return factory.updateCallExpression(node, node.expression, node.typeArguments, [literal(node.arguments[0]), ...node.arguments.slice(1)]);
    }
    return ts.visitEachChild(node, visit, context);
  };
  return ts.visitNode(sourceFile, visit);
};

for (const ws of workspaces) rmSync(join(ws, 'dist'), { recursive: true, force: true });

let written = 0;
const result = program.emit(
  undefined,
  (fileName, text) => {
    const target = distPath(fileName);
    mkdirSync(dirname(target), { recursive: true });
    if (fileName.endsWith('.map')) {
      // The map was made for the file beside its source: point its sources at src/ from dist/.
      const map = JSON.parse(text);
      map.sources = map.sources.map((source) =>
        relative(dirname(target), resolve(dirname(fileName), map.sourceRoot ?? '', source)).split(sep).join('/'),
      );
      delete map.sourceRoot;
      text = JSON.stringify(map);
    }
    writeFileSync(target, text);
    written += 1;
  },
  undefined,
  false,
  { after: [rewriteSpecifiers] },
);
if (result.diagnostics.length > 0) fail(result.diagnostics);

// Files the code reads beside itself (the console's assets): copied as they are.
let copied = 0;
for (const ws of workspaces) {
  for (const file of walk(join(ws, 'src'))) {
    if (/\.(?:m?ts|tsx)$/.test(file) || basename(file).startsWith('.')) continue;
    const target = distPath(file);
    mkdirSync(dirname(target), { recursive: true });
    cpSync(file, target);
    copied += 1;
  }
}

writeFileSync(stampFile, JSON.stringify({ hash, builtAt: new Date().toISOString() }));
const sizes = workspaces.map((ws) => walk(join(ws, 'dist')).reduce((sum, f) => sum + statSync(f).size, 0)).reduce((a, b) => a + b, 0);
console.error(
  `build: ${written} files compiled, ${copied} copied into ${workspaces.length} dist/ folders (${(sizes / 1024 / 1024).toFixed(1)} MiB) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
