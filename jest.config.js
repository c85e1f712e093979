const jestJupyterLab = require('@jupyterlab/testutils/lib/jest-config');

// Packages shipped as ES modules, which Jest must transform.
const esModules = [
  '@codemirror',
  '@jupyter/',
  '@jupyterlab/',
  '@marijn',
  '@microsoft',
  'color',
  'exenv-es6',
  'lib0',
  'marked',
  'nanoid',
  'vscode-ws-jsonrpc',
  'y-protocols',
  'y-websocket',
  'yjs'
].join('|');

const baseConfig = jestJupyterLab(__dirname);

module.exports = {
  ...baseConfig,
  automock: false,
  collectCoverageFrom: [
    'labextension/src/**/*.{ts,tsx}',
    '!labextension/src/**/*.d.ts',
    '!labextension/src/**/.ipynb_checkpoints/*'
  ],
  coverageReporters: ['lcov', 'text'],
  reporters: ['default'],
  roots: ['<rootDir>/labextension/src'],
  testRegex: '/__tests__/.*\\.spec\\.tsx?$',
  transformIgnorePatterns: [`/node_modules/(?!${esModules}).+`]
};
