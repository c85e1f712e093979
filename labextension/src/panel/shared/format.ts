/**
 * How long ago an ISO 8601 time was, in the one format every view writes
 * it: "12 s", "5 min", "3 h", "2 days" ('' when it is not a time; a time
 * ahead of `now`, another machine's clock, is "0 s").
 */
export function formatAge(iso: string | null | undefined, now: number): string {
  if (!iso) {
    return '';
  }
  const then = Date.parse(iso);
  if (Number.isNaN(then)) {
    return '';
  }
  const seconds = Math.max(0, Math.floor((now - then) / 1000));
  if (seconds < 60) {
    return `${seconds} s`;
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 48) {
    return `${hours} h`;
  }
  return `${Math.floor(hours / 24)} days`;
}

/**
 * Where a diagnostic is: "cell 3, line 2" (cells counted from 1).
 */
export function formatPlace(cell: number | null, line?: number | null): string {
  if (cell === null || cell === undefined) {
    return '';
  }
  return line ? `cell ${cell + 1}, line ${line}` : `cell ${cell + 1}`;
}

/**
 * A size in bytes for people: "812 B", "11.7 KiB", "10 MiB".
 */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const text = unit === 0 ? String(value) : String(Number(value.toFixed(1)));
  return `${text} ${units[unit]}`;
}
