import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

// Workspace packages export src/*.ts under the `@notify/source` condition and dist/*.js otherwise
// (package.json `exports`): tests run the sources, never a stale build. Vite replaces its default
// conditions with the ones given, so they are repeated (Vite's defaultServerConditions).
const conditions = ['@notify/source', 'module', 'node', 'development|production'];

/** What every project shares. */
function project(name: string, include: string[], env: Record<string, string> = {}): TestProjectInlineConfiguration {
  return {
    resolve: { conditions },
    ssr: { resolve: { conditions } },
    test: {
      name,
      include,
      env,
      globalSetup: ['test/global-setup.ts'],
      testTimeout: 20_000,
      hookTimeout: 60_000,
      // expect.poll waits for a state of the pipeline (an e-mail, a row), which takes up to seconds
      // on a loaded machine rather than Vitest's default 1 s; polled often, so a test moves on at once.
      expect: { poll: { timeout: 10_000, interval: 25 } },
      pool: 'forks',
    },
  };
}

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    projects: [
      project('all', ['apps/*/src/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts']),
      // The end-to-end suite once more with every fast path off (FAST_PATHS=none): each stage hands
      // its work to the next through the queue, and the e-mails must be the same.
      project('queued', ['test/e2e/**/*.test.ts'], { FAST_PATHS: 'none' }),
    ],
    // CI reads the counts from a JSON report; people read the default reporter.
    reporters: process.env.VITEST_JSON_REPORT ? ['default', ['json', { outputFile: process.env.VITEST_JSON_REPORT }]] : ['default'],
  },
});
