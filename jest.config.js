// Nest 12 and some of its dependencies ship ESM only; @swc/jest turns them into CommonJS for jest.
const esmPackages = ['@nestjs', '@fastify', 'cookie', 'content-disposition'];

const shared = {
  testEnvironment: 'node',
  rootDir: __dirname,
  transform: {
    '^.+\\.(t|j)s$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
};

/**
 * One project per level, named as the file names say it (`npm run test:unit`, `test:int`, `test:e2e` select one);
 * `npm test` runs them all.
 */
module.exports = {
  testTimeout: 60000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/web/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts', '<rootDir>/bench/**/*.spec.ts'] },
    { ...shared, displayName: 'int', testMatch: ['<rootDir>/test/**/*.int-spec.ts'] },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
  ],
};
