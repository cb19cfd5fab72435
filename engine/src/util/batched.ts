// Many lookups of one moment as one call: a GraphQL answer resolves a field of every endpoint it lists in the same
// pass, and each lookup that goes to other nodes (an endpoint's health in a cluster) would otherwise be a call of its own.

/** A lookup of one key that gathers the keys asked before the next turn of the event loop and loads them in one call. */
export function batched<K, V>(load: (keys: K[]) => Promise<V[]>): (key: K) => Promise<V> {
  type Waiting = Array<{ key: K; resolve(v: V): void; reject(e: unknown): void }>;
  let pending: Waiting | null = null;
  return (key) =>
    new Promise<V>((resolve, reject) => {
      if (!pending) {
        const batch: Waiting = [];
        pending = batch;
        setImmediate(() => {
          pending = null;
          load(batch.map((b) => b.key)).then(
            (values) => batch.forEach((b, i) => b.resolve(values[i])),
            (e: unknown) => batch.forEach((b) => b.reject(e)),
          );
        });
      }
      pending.push({ key, resolve, reject });
    });
}
