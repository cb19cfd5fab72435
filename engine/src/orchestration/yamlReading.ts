// A YAML file as the orchestration tool reads it: parsed by the `yaml` package with merge keys, a key set twice
// found in one pass, aliases resolved, and a mapping's keys once its merge keys apply (each source read once).
import { isAlias, isMap, isScalar, isSeq, parseDocument, visit, YAMLParseError, type Document, type LineCounter, type Node, type YAMLMap } from 'yaml';

/**
 * The `yaml` package's reading of a file as the tool reads it: merge keys (`<<: *common`) are YAML to it too. A key
 * set twice in a mapping is an error (DUPLICATE_KEY), found here in one pass: the package's own check compares each
 * key with every key before it (40,000 keys took 13 s, at each keystroke in the editor).
 */
export function parseDstack(text: string, lineCounter?: LineCounter): Document.Parsed {
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false, merge: true });
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const key = pair.key;
        if (!isScalar(key) || isMergeKey(key)) continue;
        const value = typeof key.value === 'object' && key.value !== null ? String(key.value) : key.value;
        if (seen.has(value)) {
          const [start, end] = key.range ?? [0, 0];
          doc.errors.push(new YAMLParseError([start, end], 'DUPLICATE_KEY', 'Map keys must be unique'));
        }
        seen.add(value);
      }
    },
  });
  return doc;
}

/** What a written node stands for: an alias's anchored node, any other node itself. */
export function deref(doc: Document, node: unknown): Node | null {
  if (isAlias(node)) return node.resolve(doc) ?? null;
  return (node as Node | null | undefined) ?? null;
}

/** A key of a mapping as it applies, written there or merged in. */
export interface Entry {
  key: string;
  keyNode: Node;
  /** The value as written (an alias stays an alias: its own position is where the user wrote it). */
  value: Node | null;
  /** For a merged key: the alias of the merge that brought it in, where its problems are reported. */
  via?: Node;
}

/** A `|` or `>` scalar: its range runs past its line break. */
export const isBlock = (n: Node): boolean => isScalar(n) && (n.type === 'BLOCK_LITERAL' || n.type === 'BLOCK_FOLDED');

export const isMergeKey = (n: unknown): boolean => isScalar(n) && typeof n.value === 'symbol' && n.value.description === '<<';

/**
 * The keys of a mapping once its merge keys apply, as the YAML merge type defines them: its own pairs, then each
 * merge source's pairs that are not there yet (an earlier source wins). Merge values that are not mappings go to
 * `bad`; a source already being merged (an alias cycle) adds nothing, nor does one merged already in this reading: its
 * keys are all there (a mapping that merges the same source twice at each of 20 levels took minutes).
 */
export function entriesOf(doc: Document, map: YAMLMap, bad: Node[] = [], via?: Node, merging = new Set<YAMLMap>(), done = new Set<YAMLMap>()): Entry[] {
  merging.add(map);
  done.add(map);
  const own: Entry[] = [];
  const merged: Entry[] = [];
  for (const pair of map.items) {
    if (!isMergeKey(pair.key)) {
      const k = deref(doc, pair.key);
      own.push({ key: isScalar(k) ? String(k.value) : '', keyNode: pair.key as Node, value: pair.value as Node | null, via });
      continue;
    }
    const written = pair.value as Node | null;
    const value = deref(doc, written);
    const sources = isSeq(value)
      ? value.items.map((item) => ({ item: item as Node, at: isAlias(written) ? written : (item as Node) }))
      : [{ item: written, at: written }];
    for (const { item, at } of sources) {
      const source = deref(doc, item);
      if (!isMap(source)) {
        if (at) bad.push(via ?? at);
        continue;
      }
      if (merging.has(source) || done.has(source)) continue;
      merged.push(...entriesOf(doc, source, bad, via ?? (isAlias(at) ? at : undefined), merging, done));
    }
  }
  const have = new Set(own.map((e) => e.key));
  const out = [...own];
  for (const e of merged) {
    if (have.has(e.key)) continue;
    have.add(e.key);
    out.push(e);
  }
  merging.delete(map);
  return out;
}

/** The value a mapping's key has (aliases resolved, merge keys applied), with the entry it comes from. */
export function lookup(doc: Document, map: unknown, key: string): { entry: Entry; value: Node | null } | undefined {
  if (!isMap(map)) return undefined;
  const entry = entriesOf(doc, map).find((e) => e.key === key);
  return entry && { entry, value: deref(doc, entry.value) };
}
