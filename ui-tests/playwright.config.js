/**
 * Playwright configuration for the kale-ext Galata tests (`jlpm test`).
 * The server and the browser: ./jupyter-server.js. Timings are not tested
 * here: they are measured by the benchmark in ../benchmarks/panel.
 */
const { jupyterConfig } = require('./jupyter-server');

module.exports = {
  ...jupyterConfig(),
  // Two browsers against the one server: each test writes its notebooks in
  // a folder of its own (tmpPath), its jobs are named after them, galata
  // keeps each page's workspace and settings in that page, and jobs that do
  // not fit the machine at once wait in the local queue. 9.2 min here where
  // one worker took 14.9 (25 tests, a 2-core VM at load 15-20). The
  // benchmarks keep one worker.
  workers: 2,
  // A plain summary in every environment (the base config uses the
  // 'github' reporter when CI is set).
  // The JSON report is read by ../scripts/galata_failures.py, which prints
  // each failure's reason last.
  reporter: [
    ['list'],
    ['html', { open: 'never' }],
    ['json', { outputFile: 'test-results/report.json' }]
  ],
  // Tests, not files, are handed to the workers: a file of long tests
  // (panel.spec's six) no longer keeps one worker busy while the other
  // waits at the end.
  fullyParallel: true
};
