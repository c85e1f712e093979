/**
 * Playwright configuration for the kale-ext Galata tests.
 *
 * Set CHROMIUM_PATH to run on a system Chromium (e.g. Debian's
 * /usr/bin/chromium) instead of a browser downloaded by Playwright.
 */
const os = require('os');
const path = require('path');

const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

const executablePath = process.env.CHROMIUM_PATH || undefined;

module.exports = {
  ...baseConfig,
  // A plain summary in every environment (the base config uses the
  // 'github' reporter when CI is set).
  reporter: [['list'], ['html', { open: 'never' }]],
  workers: 1,
  use: {
    ...baseConfig.use,
    // Video recording needs Playwright's own ffmpeg download.
    video: 'off',
    ...(executablePath ? { launchOptions: { executablePath } } : {})
  },
  webServer: {
    command: 'jlpm start',
    url: 'http://localhost:8888/lab',
    timeout: 120 * 1000,
    reuseExistingServer: !process.env.CI,
    env: {
      ...process.env,
      // Jobs run here, on the local backend, in a directory of their own
      // (not the user's jobs).
      KALE_EXT_BACKEND: 'local',
      KALE_EXT_JOBS_DIR: path.join(
        os.tmpdir(),
        `kale-ext-ui-tests-${process.pid}`
      )
    }
  }
};
