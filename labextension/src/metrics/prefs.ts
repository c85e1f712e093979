/**
 * How the user left the metric charts: taller or not, and which metrics
 * they read on a log axis. Remembered in the browser (across tabs, jobs
 * and reloads).
 */
export interface IChartPrefs {
  tall: boolean;
  /** Names of the metrics drawn on a log axis. */
  log: string[];
}

const KEY = 'kale-ext:metric-charts';

/**
 * The remembered preferences (defaults when none or unreadable).
 */
export function loadChartPrefs(storage: Storage | null = store()): IChartPrefs {
  try {
    const data = JSON.parse(storage?.getItem(KEY) ?? '{}');
    return {
      tall: data.tall === true,
      log: Array.isArray(data.log)
        ? data.log.filter((n: unknown) => typeof n === 'string')
        : []
    };
  } catch {
    return { tall: false, log: [] };
  }
}

/**
 * Remember the preferences (silently not, where storage is refused).
 */
export function saveChartPrefs(
  prefs: IChartPrefs,
  storage: Storage | null = store()
): void {
  try {
    storage?.setItem(KEY, JSON.stringify(prefs));
  } catch {
    // private mode or full: the choice lasts until the tab closes
  }
}

function store(): Storage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}
