/**
 * Where a job's logs tab goes: one tab per job, not a tab per submit.
 *
 * - A tab of the job already open is shown (never a second one).
 * - A submit from a notebook replaces the last logs tab a submit from that
 *   notebook opened, unless the user pinned it (the pin in the logs tab).
 * - Opening from a row, or a first submit, opens a new tab. A tab opened
 *   from a row is the user's, never replaced by a submit.
 */
export interface ILogsTab {
  /** The job whose logs it shows. */
  job: string;
  /** The notebook whose submit opened it; null when opened another way. */
  notebook: string | null;
  pinned: boolean;
}

export type LogsPlace =
  | { kind: 'show'; index: number }
  | { kind: 'replace'; index: number }
  | { kind: 'new' };

/**
 * Where job `job`'s logs go among the open `tabs` (oldest first), opened by
 * a submit from `notebook` (its path), or from elsewhere (null).
 */
export function placeLogs(
  tabs: readonly ILogsTab[],
  job: string,
  notebook: string | null
): LogsPlace {
  const open = tabs.findIndex(tab => tab.job === job);
  if (open >= 0) {
    return { kind: 'show', index: open };
  }
  if (notebook !== null) {
    for (let i = tabs.length - 1; i >= 0; i--) {
      if (tabs[i].notebook === notebook && !tabs[i].pinned) {
        return { kind: 'replace', index: i };
      }
    }
  }
  return { kind: 'new' };
}
