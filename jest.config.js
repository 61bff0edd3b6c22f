/** Two projects: `unit` (colocated *.test.ts in every workspace, run on sources) and `e2e` (test/, the real binary). */
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }];
// Stops the real database servers tests started (scripts/services/db.js); runs once per project that ran tests.
const globalTeardown = '<rootDir>/scripts/services/jest-teardown.js';
// Names the run, so that a second jest run in the same checkout does not stop this one's servers.
const globalSetup = '<rootDir>/scripts/services/jest-setup.js';
const moduleNameMapper = {
  '^@strongroom/sdk-plugin$': '<rootDir>/sdk-plugin/src/index.ts',
  '^@strongroom/sdk-plugin/(.*)$': '<rootDir>/sdk-plugin/src/$1',
  '^(\\.{1,2}/.*)\\.js$': '$1',
};
module.exports = {
  // Global in jest (not per project): e2e tests start real processes.
  testTimeout: 60000,
  projects: [
    {
      displayName: 'unit',
      rootDir: __dirname,
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': tsJest },
      moduleNameMapper,
      globalSetup,
      globalTeardown,
      testMatch: ['<rootDir>/{core,sdk-plugin}/src/**/*.test.ts', '<rootDir>/plugins/*/src/**/*.test.ts'],
    },
    {
      displayName: 'e2e',
      rootDir: __dirname,
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': tsJest },
      moduleNameMapper,
      globalSetup,
      globalTeardown,
      testMatch: ['<rootDir>/test/**/*.test.ts'],
    },
  ],
};
