import { ChildProcess, execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { expect, test } from './fixtures';

/**
 * The panel against a Kubernetes cluster: the emulated one of the Python
 * tests (`python -m tests.harness.cluster`: a Kubernetes API on a loopback
 * port that admits TrainJobs as Kubeflow Trainer v2.3 does and runs each
 * pod's command as a local process), and a Jupyter server of its own whose
 * backend is `kubernetes`, reaching it through the kubeconfig it wrote. Both
 * are started for this file and stopped after it; the other files keep the
 * run's local-backend server.
 */

const REPOSITORY = path.resolve(__dirname, '..', '..');
const JOB_TIMEOUT = 90_000;

/** A port the OS has just given out (as jupyter-server.js picks the run's). */
function freePort(): number {
  const script =
    "const s = require('net').createServer();" +
    "s.listen(0, '127.0.0.1', () => {" +
    ' process.stdout.write(String(s.address().port)); s.close(); });';
  return Number(
    execFileSync(process.execPath, ['-e', script], { encoding: 'utf-8' })
  );
}

const PORT = freePort();
test.use({ baseURL: `http://127.0.0.1:${PORT}` });
test.describe.configure({ mode: 'serial' });

let folder = '';
const started: ChildProcess[] = [];

/**
 * What the cluster holds, printed when a test fails (CI keeps only the
 * output): each TrainJob's status, each pod's phase and container state, the
 * last lines of its log, and the namespace's last events (the emulated
 * Trainer's errors among them).
 */
const DESCRIBE = `
import json
from kubernetes import client, config
config.load_kube_config()
ns = config.list_kube_config_contexts()[1]["context"].get("namespace") or "default"
custom, core = client.CustomObjectsApi(), client.CoreV1Api()
for tj in custom.list_namespaced_custom_object(
        "trainer.kubeflow.org", "v1alpha1", ns, "trainjobs")["items"]:
    print("TrainJob", tj["metadata"]["name"], json.dumps(tj.get("status") or {})[:3000])
for pod in core.list_namespaced_pod(ns).items:
    states = [(c.name, {k: v for k, v in c.state.to_dict().items() if v})
              for c in pod.status.container_statuses or []]
    print("pod", pod.metadata.name, pod.status.phase, json.dumps(states, default=str)[:1000])
    try:
        print(core.read_namespaced_pod_log(pod.metadata.name, ns, tail_lines=30))
    except Exception as e:
        print("  its log:", e)
for event in core.list_namespaced_event(ns).items[-30:]:
    print("event", event.involved_object.kind, event.involved_object.name, event.type,
          event.reason, (event.message or "")[:300])
`;

/** Start `command` in a process group of its own (stopped as a whole). */
function start(command: string, args: string[], cwd: string, env = {}) {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe']
  });
  started.push(child);
  return child;
}

/** Until `child` prints a line matching `ready` (or exits, or time runs out). */
function printed(child: ChildProcess, ready: RegExp, what: string) {
  return new Promise<void>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`${what}: not ready in 60 s:\n${seen}`)),
      60_000
    );
    const listen = (data: Buffer) => {
      seen += data.toString();
      if (ready.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', listen);
    child.stderr!.on('data', listen);
    child.on('exit', code => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}):\n${seen}`));
    });
  });
}

test.beforeAll(async () => {
  test.setTimeout(150_000);
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'kale-ext-cluster-'));
  const kubeconfig = path.join(folder, 'kubeconfig');
  const cluster = start(
    'python',
    ['-m', 'tests.harness.cluster', '--kubeconfig', kubeconfig],
    REPOSITORY
  );
  await printed(cluster, /^ready /m, 'the emulated cluster');
  const server = start(
    'jupyter',
    [
      'lab',
      '--config',
      'jupyter_server_test_config.py',
      '--ServerApp.ip=127.0.0.1',
      `--ServerApp.port=${PORT}`,
      '--ServerApp.port_retries=0'
    ],
    path.resolve(__dirname, '..'),
    {
      KALE_EXT_BACKEND: 'kubernetes',
      KUBECONFIG: kubeconfig,
      // Its data folder (the panel's kept state) is this file's, as the
      // run's server has its own (jupyter-server.js).
      JUPYTER_DATA_DIR: path.join(folder, 'data')
    }
  );
  await printed(server, /is running at:/, 'the Jupyter server');
});

test.afterEach(async ({}, testInfo) => {
  if (testInfo.status === testInfo.expectedStatus || !folder) {
    return;
  }
  let state: string;
  try {
    state = execFileSync('python', ['-c', DESCRIBE], {
      cwd: REPOSITORY,
      env: { ...process.env, KUBECONFIG: path.join(folder, 'kubeconfig') },
      encoding: 'utf-8',
      timeout: 60_000
    });
  } catch (e) {
    state = `the cluster could not be described: ${e}`;
  }
  console.log(`--- the emulated cluster after the failure:\n${state}`);
  await testInfo.attach('emulated cluster', {
    body: state,
    contentType: 'text/plain'
  });
});

test.afterAll(async () => {
  for (const child of started.reverse()) {
    if (child.exitCode === null) {
      const ended = new Promise(resolve => child.on('exit', resolve));
      process.kill(-child.pid!, 'SIGTERM');
      await ended;
    }
  }
  fs.rmSync(folder, { recursive: true, force: true });
});

/** Each rank prints `steps` lines, then a last line naming its rank. */
const STEPS = [
  { source: 'import os\nimport time', tags: ['imports'] },
  { source: 'steps = 3', tags: ['parameters'] },
  {
    source:
      "rank = os.environ['RANK']\n" +
      'for step in range(steps):\n' +
      "    print(f'step {step} on rank {rank}', flush=True)\n" +
      '    time.sleep(0.5)\n' +
      "print(f'finished on rank {rank}', flush=True)"
  }
];

test('on a cluster: submit on 2 nodes, watch it run and complete with node 1’s log, delete a running job', async ({
  kale,
  page,
  consoleErrors
}) => {
  test.setTimeout(2 * JOB_TIMEOUT + 60_000);
  const panel = await kale.notebook('ranks.ipynb', STEPS, { settle: true });
  await expect(panel.locator('[data-fact="backend"]')).toContainText(
    'Kubernetes'
  );
  await kale.fill({ Nodes: '2' });
  await expect(kale.submitButton).toBeEnabled();

  // A short job: Running, then Complete; node 1's log ends with its line.
  const name = await kale.submit();
  await kale.waitForStatus(name, 'Running', JOB_TIMEOUT);
  const logs = kale.logs(name);
  await expect(logs).toBeVisible();
  await logs.getByRole('tab', { name: 'Node 1' }).click();
  const lines = logs.getByRole('log').locator('.kale-ext-LogLine');
  await expect(lines.filter({ hasText: 'on rank 1' }).first()).toBeVisible({
    timeout: JOB_TIMEOUT
  });
  await kale.waitForStatus(name, 'Complete', JOB_TIMEOUT);
  // Its last line (torchrun may report after it, as node 0's store closes).
  await expect(lines.filter({ hasText: 'finished on rank 1' })).toHaveCount(1);
  await expect(lines.filter({ hasText: 'on rank 0' })).toHaveCount(0);
  await kale.screenshot('cluster-complete.png', page, false);

  // A long job, deleted while it runs: its pods go, and its row.
  await panel.getByLabel('Parameter steps', { exact: true }).fill('600');
  await kale.submitButton.click();
  const other = panel.locator(`.kale-ext-JobRow:not([data-job="${name}"])`);
  await expect(other).toHaveCount(1, { timeout: JOB_TIMEOUT });
  const long = (await other.getAttribute('data-job'))!;
  await kale.waitForStatus(long, 'Running', JOB_TIMEOUT);
  await expect(
    kale.logs(long).getByRole('log').locator('.kale-ext-LogLine').first()
  ).toBeVisible({ timeout: JOB_TIMEOUT });
  let before = 0;
  const confirm = async () => {
    await kale.screenshot('cluster-delete.png', page, false);
    before = consoleErrors.length;
  };
  await kale.deleteJob(long, confirm, JOB_TIMEOUT);
  // The TrainJob goes once its pods have stopped (foreground deletion).
  await expect
    .poll(
      async () => (await page.request.get(`/kale-ext/jobs/${long}`)).status(),
      {
        timeout: JOB_TIMEOUT
      }
    )
    .toBe(404);
  // Its open log view then meets the job's 404 and says the job is gone;
  // Chromium logs each such answer as a console error: only those are expected.
  const gone = /the server responded with a status of 404/;
  const after = consoleErrors.splice(before).filter(e => !gone.test(e));
  consoleErrors.push(...after);
});
