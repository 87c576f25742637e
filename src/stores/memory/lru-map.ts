/** A bounded LRU map of strings, shared by the memory and file conversation indexes. */
export class LruMap {
  private readonly entries = new Map<string, string>();

  constructor(private readonly maxEntries: number) {}

  /** Sets the entry; returns the keys evicted to stay within the cap. */
  set(key: string, value: string): string[] {
    this.entries.delete(key);
    this.entries.set(key, value);
    const evicted: string[] = [];
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
      evicted.push(oldest);
    }
    return evicted;
  }

  get(key: string): string | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Entries, least recently used first. */
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries.entries();
  }
}
