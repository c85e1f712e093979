/**
 * A set and a map that keep at most `limit` entries: adding one more drops
 * the oldest (the first added). What the panel remembers per job (jobs
 * deleted here, what was read of ended jobs, timelines) is kept in them, so
 * its memory stays bounded however many jobs a page sees.
 */
export class CappedSet<T> {
  constructor(readonly limit: number) {}

  get size(): number {
    return this._items.size;
  }

  has(item: T): boolean {
    return this._items.has(item);
  }

  /** Add `item`; the oldest goes once there are more than `limit`. */
  add(item: T): this {
    this._items.add(item);
    dropOldest(this._items, this.limit);
    return this;
  }

  delete(item: T): boolean {
    return this._items.delete(item);
  }

  private _items = new Set<T>();
}

export class CappedMap<K, V> {
  constructor(readonly limit: number) {}

  get size(): number {
    return this._items.size;
  }

  has(key: K): boolean {
    return this._items.has(key);
  }

  get(key: K): V | undefined {
    return this._items.get(key);
  }

  /** Set `key`; the oldest key goes once there are more than `limit`. */
  set(key: K, value: V): this {
    this._items.set(key, value);
    dropOldest(this._items, this.limit);
    return this;
  }

  delete(key: K): boolean {
    return this._items.delete(key);
  }

  private _items = new Map<K, V>();
}

function dropOldest<K>(
  items: { size: number; keys(): IterableIterator<K>; delete(key: K): boolean },
  limit: number
): void {
  for (const key of items.keys()) {
    if (items.size <= limit) {
      return;
    }
    items.delete(key);
  }
}
