// A Map kept as a cache of what was used last: Map iterates in insertion order, so an entry set
// again (deleted, then set) moves to the end, and the first entries are the least recent. Pure.

/** Sets `key` as the most recent entry of `map`, and forgets the least recent past `max` entries. */
export function setRecent<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= max) return;
    map.delete(oldest);
  }
}
