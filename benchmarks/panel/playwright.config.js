/**
 * The panel benchmark (not a test): how fast the kale_ext panel and logs
 * view are, against JupyterLab's own File Browser and file editor doing the
 * same amount of work in the same run. See README.md; run from ui-tests/:
 *
 *   jlpm playwright test --config ../benchmarks/panel/playwright.config.js
 */
const path = require('path');

const { jupyterConfig } = require('../../ui-tests/jupyter-server');

const config = jupyterConfig();

module.exports = {
  ...config,
  testDir: __dirname,
  testMatch: '*.bench.ts',
  // Beside the tests' results (ignored by git).
  outputDir: path.join(__dirname, '../../ui-tests/test-results/benchmarks'),
  reporter: [['list']],
  // Each test is one round on a fresh page.
  timeout: 3 * 60 * 1000,
  use: { ...config.use, actionTimeout: 30 * 1000 }
};
