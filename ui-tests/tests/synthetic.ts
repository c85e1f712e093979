import type { Page } from '@playwright/test';

/**
 * Synthetic server answers, for the panel and the logs view at scale (the
 * tests in scale.spec.ts and the benchmark in benchmarks/panel). No tests.
 */

/**
 * `n` jobs in every status, newest first.
 */
export function manyJobs(n: number): Record<string, unknown>[] {
  const now = Date.now();
  return Array.from({ length: n }, (_, i) => ({
    name: `job-${String(i).padStart(3, '0')}`,
    status: ['Running', 'Complete', 'Failed', 'Queued'][i % 4],
    reason: i % 4 === 2 ? 'node 1 exited with code 1' : null,
    backend: 'local',
    runtime: 'torch-distributed',
    num_nodes: 1 + (i % 4),
    procs_per_node: 1,
    nodes: [],
    created: new Date(now - i * 60_000).toISOString(),
    finished: null,
    provenance: {}
  }));
}

/**
 * Answer `GET kale-ext/jobs` with `jobs`, and what the panel reads of each
 * job as the server would: the job (`GET jobs/{name}`, which an ended job's
 * saved result comes from), its outputs (none) and its logs (which the
 * final metrics come from: none).
 */
export async function serveJobs(
  page: Page,
  jobs: Record<string, unknown>[]
): Promise<void> {
  await page.route(/\/kale-ext\/jobs(\?.*)?$/, route =>
    route.request().method() === 'GET'
      ? route.fulfill({ json: { jobs } })
      : route.fallback()
  );
  const byName = new Map(jobs.map(job => [job.name as string, job]));
  await page.route(/\/kale-ext\/jobs\/[^/?]+(\/[a-z]+)?(\?.*)?$/, route => {
    const [, name, part] =
      /\/kale-ext\/jobs\/([^/?]+)(?:\/([a-z]+))?/.exec(route.request().url()) ??
      [];
    const job = byName.get(decodeURIComponent(name ?? ''));
    if (route.request().method() !== 'GET' || !job) {
      return route.fallback();
    }
    if (part === undefined) {
      return route.fulfill({ json: { ...job, result: null } });
    }
    if (part === 'outputs') {
      return route.fulfill({
        json: { location: '', files: [], note: null, listed: true }
      });
    }
    if (part === 'logs') {
      return route.fulfill({
        status: 200,
        headers: { 'Content-Type': 'text/event-stream; charset=utf-8' },
        body: `event: end\ndata: ${JSON.stringify({ status: job.status, reason: job.reason ?? null })}\n\n`
      });
    }
    return route.fallback();
  });
}

/**
 * A finished two-node job `name` whose log (SSE, then `end`) has `lines`
 * lines alternating between the nodes: `[rank N] step i loss … line i`.
 * Answers the jobs list and the job's logs.
 */
export async function serveLongLog(
  page: Page,
  name: string,
  lines: number
): Promise<void> {
  const job = {
    ...manyJobs(1)[0],
    name,
    status: 'Complete',
    reason: null,
    num_nodes: 2,
    finished: new Date().toISOString()
  };
  const events: string[] = [];
  const offsets = [0, 0];
  for (let i = 0; i < lines; i++) {
    const node = i % 2;
    const text = `[rank ${node}] step ${i} loss ${(1 / (i + 1)).toFixed(6)} line ${i}`;
    offsets[node] += text.length + 1;
    const data = { node, rank: node, text, offset: offsets[node] };
    events.push(
      `id: ${node}:${offsets[node]}\ndata: ${JSON.stringify(data)}\n\n`
    );
  }
  events.push('event: end\ndata: {"status": "Complete"}\n\n');
  const body = events.join('');
  await serveJobs(page, [job]);
  await page.route(new RegExp(`/kale-ext/jobs/${name}/logs`), route =>
    route.fulfill({
      status: 200,
      headers: { 'Content-Type': 'text/event-stream; charset=utf-8' },
      body
    })
  );
}
