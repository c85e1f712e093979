/**
 * The Jupyter server the browser tests and the panel benchmarks run
 * against: started for the run on a port the OS picks, never a server that
 * was already running.
 *
 * Set CHROMIUM_PATH to run on a system Chromium (e.g. Debian's
 * /usr/bin/chromium) instead of a browser downloaded by Playwright.
 */
const { execFileSync } = require('child_process');
const os = require('os');
const path = require('path');

const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

/**
 * Where the port found for this run is handed to Playwright's workers,
 * which load the configuration again (they inherit the runner's
 * environment). Not meant to be set by hand.
 */
const PORT_VARIABLE = 'KALE_EXT_UI_TESTS_PORT';

/**
 * A port the OS has just given out: bound to port 0 on the loopback
 * interface and released. The server takes it with no retries, so in the
 * unlikely case another process took it in between, the run fails loudly
 * instead of testing a different server.
 */
function freePort() {
  if (!process.env[PORT_VARIABLE]) {
    const script =
      "const s = require('net').createServer();" +
      "s.listen(0, '127.0.0.1', () => {" +
      ' process.stdout.write(String(s.address().port)); s.close(); });';
    process.env[PORT_VARIABLE] = execFileSync(
      process.execPath,
      ['-e', script],
      {
        encoding: 'utf-8'
      }
    ).trim();
  }
  return Number(process.env[PORT_VARIABLE]);
}

/**
 * The Playwright settings shared by the tests and the benchmarks: Galata's,
 * one worker, this run's server.
 */
function jupyterConfig() {
  const port = freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  const executablePath = process.env.CHROMIUM_PATH || undefined;
  // This run's own folder (made by the runner, which starts the server).
  const runDir = path.join(os.tmpdir(), `kale-ext-ui-tests-${port}`);
  return {
    ...baseConfig,
    workers: 1,
    use: {
      ...baseConfig.use,
      baseURL,
      // Video recording needs Playwright's own ffmpeg download.
      video: 'off',
      ...(executablePath ? { launchOptions: { executablePath } } : {})
    },
    webServer: {
      command: `jlpm start --ServerApp.ip=127.0.0.1 --ServerApp.port=${port} --ServerApp.port_retries=0`,
      cwd: __dirname,
      url: `${baseURL}/lab`,
      timeout: 120 * 1000,
      // A server already answering there is not this run's: fail.
      reuseExistingServer: false,
      env: {
        ...process.env,
        // Jobs run here, on the local backend, in a directory of their own
        // (not the user's jobs).
        KALE_EXT_BACKEND: 'local',
        KALE_EXT_JOBS_DIR: path.join(runDir, 'jobs'),
        // The server's data folder (the panel's kept state, notebook
        // signatures, runtime files) is this run's too, never the user's.
        JUPYTER_DATA_DIR: path.join(runDir, 'data')
      }
    }
  };
}

module.exports = { jupyterConfig };
