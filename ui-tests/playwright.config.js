/**
 * Playwright configuration for the kale-ext Galata tests (`jlpm test`).
 * The server and the browser: ./jupyter-server.js. Timings are not tested
 * here: they are measured by the benchmark in ../benchmarks/panel.
 */
const { jupyterConfig } = require('./jupyter-server');

module.exports = {
  ...jupyterConfig(),
  // A plain summary in every environment (the base config uses the
  // 'github' reporter when CI is set).
  reporter: [['list'], ['html', { open: 'never' }]]
};
