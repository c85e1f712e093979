import { formatAge } from '../shared/format';

/**
 * How the jobs list draws a name and a time in a narrow panel: the part of
 * a name that tells it apart from the others listed stays in view (the
 * rest gives way to an ellipsis in the middle), and every time is one
 * format, relative ("3 min ago"), with the time itself on hover. Pure.
 */

/**
 * A name in two parts: `head`, which may be cut short (an ellipsis at its
 * end), and `tail`, the part that tells it apart from the other names,
 * which stays in view.
 */
export interface INameParts {
  head: string;
  tail: string;
}

/** Where a name's words meet: a tail starts at one (and holds it). */
const SEPARATOR = /[-_]/;

/**
 * Split `name` where it stops sharing a start with the most similar of
 * `others`, moved back to the start of that word (its separator in the
 * tail): `mnist-train-a1b2c` among `mnist-train-x9y8z` is `mnist-train` and
 * `-a1b2c`. A name like no other (or alone) is all tail: its start tells it
 * apart. `others` may hold `name` itself.
 */
export function nameParts(name: string, others: Iterable<string>): INameParts {
  let shared = 0;
  for (const other of others) {
    if (other === name) {
      continue;
    }
    let i = 0;
    while (i < name.length && i < other.length && name[i] === other[i]) {
      i++;
    }
    shared = Math.max(shared, i);
  }
  // a name that starts another one (`run` of `run-2`): the whole is its tail
  let start = shared < name.length ? shared : 0;
  while (start > 0 && !SEPARATOR.test(name[start])) {
    start--;
  }
  return { head: name.slice(0, start), tail: name.slice(start) };
}

/**
 * The split of each of `names` (their longest shared starts found by
 * sorting: a name's most similar neighbour sits next to it in order).
 */
export function namesParts(names: string[]): Map<string, INameParts> {
  const sorted = [...new Set(names)].sort();
  const out = new Map<string, INameParts>();
  sorted.forEach((name, i) => {
    const near = [sorted[i - 1], sorted[i + 1]].filter(
      (n): n is string => n !== undefined
    );
    out.set(name, nameParts(name, near));
  });
  return out;
}

/**
 * How long ago an ISO 8601 time was, in words: `just now` (under 5 s, or
 * ahead of `now`: another machine's clock), else formatAge's `40 s ago`,
 * `3 min ago`, `5 h ago`, `2 days ago` ('' when it is not a time).
 */
export function timeAgo(iso: string | null | undefined, now: number): string {
  const age = formatAge(iso, now);
  if (!age) {
    return '';
  }
  return now - Date.parse(iso!) < 5000 ? 'just now' : `${age} ago`;
}

/**
 * An ISO 8601 time as the user's locale writes a date and time, with its
 * UTC form: what a relative time shows on hover ('' when not a time).
 */
export function timeTitle(iso: string | null | undefined): string {
  const then = iso ? new Date(iso) : null;
  if (!then || Number.isNaN(then.getTime())) {
    return '';
  }
  const utc = then.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `${then.toLocaleString()} (${utc})`;
}

/**
 * Text with the ISO 8601 times in it found (`stopped by ann at
 * 2026-12-06T08:00:00Z`): its pieces, a time's as `{ time }`, so a view
 * writes every time the one way.
 */
export function splitTimes(text: string): (string | { time: string })[] {
  const pieces: (string | { time: string })[] = [];
  const pattern =
    /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})/g;
  let last = 0;
  let found: RegExpExecArray | null;
  while ((found = pattern.exec(text)) !== null) {
    const at = found.index;
    if (at > last) {
      pieces.push(text.slice(last, at));
    }
    pieces.push({ time: found[0] });
    last = at + found[0].length;
  }
  if (last < text.length) {
    pieces.push(text.slice(last));
  }
  return pieces;
}
