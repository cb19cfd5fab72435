// One orchestration YAML file -> its model (kind, name, region, mounts) and its diagnostics, with positions
// taken from the `yaml` package's own node ranges. Cross-file rules live in workspace.ts.
import { isAlias, isMap, isNode, isScalar, isSeq, LineCounter, visit, type Document, type Node, type YAMLError } from 'yaml';
import { didYouMean } from '../catalog';
import { DiagnosticSink } from '../project/rules';
import type { Range } from '../project/model';
import { deref, entriesOf, isBlock, lookup, parseDstack } from './yamlReading';
import { DEFAULT_KEY_VARIABLE, ENV_REFERENCE, SERVER, TASK, VOLUME, checkDatacenter, type KeySpec } from './rules';

export type DstackKind = 'task' | 'volume' | 'server' | 'other';

export interface Located<T> {
  value: T;
  range: Range;
}
export interface DstackFile {
  file: string;
  kind: DstackKind;
  name?: Located<string>;
  /** volume: its region and backend. */
  region?: Located<string>;
  backend?: Located<string>;
  /** task: allowed regions and volume mounts. */
  regions?: Located<string[]>;
  mounts: Array<{ name: string; path: string; range: Range }>;
  volumesRange?: Range;
}

/** Task/volume files and the tool's server configuration, by project-relative path. */
export function dstackKindOf(file: string): 'config' | 'server' | undefined {
  const base = file.split('/').pop() ?? '';
  if (base === '.dstack.yml' || base.endsWith('.dstack.yml') || base === '.dstack.yaml' || base.endsWith('.dstack.yaml')) return 'config';
  if (/(^|\/)\.dstack\/server\/config\.ya?ml$/.test(file)) return 'server';
  return undefined;
}

/** The `type` a configuration declares (undefined when it has none): one reading for the validator and the editor. */
export function configTypeOf(doc: Document): unknown {
  const t = lookup(doc, doc.contents, 'type');
  if (!t) return undefined;
  return isScalar(t.value) ? t.value.value : t.value;
}

/** A file's kind and the key table that checks it: the server configuration by its path, the others by their `type`. */
export function dstackTableOf(file: string, doc: Document): { kind: DstackKind; type: unknown; table?: Record<string, KeySpec> } {
  if (dstackKindOf(file) === 'server') return { kind: 'server', type: undefined, table: SERVER };
  const type = configTypeOf(doc);
  if (type === 'task') return { kind: 'task', type, table: TASK };
  if (type === 'volume') return { kind: 'volume', type, table: VOLUME };
  return { kind: 'other', type };
}

/**
 * A did-you-mean for a key: a typo of a key, not another key that shares a word with it (`idle_duration` is no
 * typo of `max_duration`: the quick fix would change the meaning). Each word typed must be a word of the guess,
 * a typo of one, or the guess written without its underscores (`shmsize`).
 */
function keyGuess(key: string, keys: readonly string[]): string | undefined {
  const guess = didYouMean(key, keys);
  if (!guess) return undefined;
  const words = [...guess.split(/[_-]/), guess.replace(/[_-]/g, '')];
  return key.split(/[_-]/).every((w) => words.includes(w) || didYouMean(w, words)) ? guess : undefined;
}

/** A YAML parse error in a sentence that says what to do: the parser's own words for the rest (a library's advice dropped). */
function yamlErrorText(e: YAMLError, text: string): string {
  switch (e.code) {
    case 'DUPLICATE_KEY': {
      const key = /^[^:\n]*/.exec(text.slice(e.pos[0]))![0].trim();
      return `${key ? `the key ${key}` : 'a key'} is set twice in this mapping (the tool refuses the file): keep one.`;
    }
    case 'MULTIPLE_DOCS':
      return 'the file holds several YAML documents (separated by ---): the tool reads one configuration a file; put each in a file of its own.';
    case 'TAB_AS_INDENT':
      return 'a tab indents this line: YAML indents with spaces only; replace the tab with spaces.';
    default:
      return `YAML syntax error: ${e.message.split('\n')[0]}; fix the indentation or quoting here.`;
  }
}

export function analyzeDstack(file: string, text: string): { model: DstackFile; sink: DiagnosticSink } {
  const sink = new DiagnosticSink(file);
  const lc = new LineCounter();
  const doc = parseDstack(text, lc);
  const pos = (offset: number) => {
    const p = lc.linePos(Math.min(offset, text.length));
    return { line: p.line - 1, character: p.col - 1 };
  };
  const rangeOf = (n: { range?: [number, number, number] | null } | null | undefined): Range => {
    const r = n?.range ?? [0, 0, 0];
    return { start: pos(r[0]), end: pos(r[1]) };
  };
  const model: DstackFile = { file, kind: 'other', mounts: [] };
  for (const e of doc.errors) sink.add('syntax-error', yamlErrorText(e, text), { start: pos(e.pos[0]), end: pos(e.pos[1]) });
  // The parser accepts an alias with no anchor; the tool fails to read the file.
  visit(doc, {
    Alias(_, n) {
      if (!n.resolve(doc))
        sink.add('syntax-error', `YAML alias *${n.source} has no anchor before it: set &${n.source} on a value above, or write the value here.`, rangeOf(n));
    },
  });
  if (sink.items.length) return { model, sink };
  const root = doc.contents as Node | null;
  if (root === null) return { model, sink };
  if (!isMap(root)) {
    sink.add('invalid-type', 'the file must be a mapping of keys (type: task, name: ...), not a single value or a list.', rangeOf(root));
    return { model, sink };
  }

  const { kind, type: t, table } = dstackTableOf(file, doc);
  model.kind = kind;
  if (kind !== 'server') {
    if (t === undefined) sink.add('missing-key', "the configuration has no 'type': add type: task or type: volume.", rangeOf(root.items[0]?.key as Node));
    else if (t === null) {
      const written = lookup(doc, root, 'type')?.entry;
      sink.add('missing-key', "the configuration's 'type' is empty: write type: task or type: volume.", rangeOf(written?.via ?? written?.keyNode));
    } else if (!table && !['service', 'dev-environment', 'fleet', 'gateway'].includes(String(t))) {
      const guess = didYouMean(String(t), ['task', 'volume']);
      const written = lookup(doc, root, 'type')?.entry;
      sink.add(
        'invalid-value',
        `type "${String(t)}" is not a configuration type${guess ? `: did you mean "${guess}"?` : '; use task or volume.'}`,
        rangeOf(written?.via ?? written?.value),
      );
    }
  }
  if (!table) return { model, sink };

  // Each node is checked once against each spec: an anchor used again reports nothing twice, and alias cycles end.
  const checked = new Map<Node, Set<KeySpec>>();
  /** `at`: where to report what is found inside a value that is not written here (an alias's or a merge's position). */
  const walk = (written: Node | null, spec: KeySpec, where: string, at?: Range): void => {
    const node = deref(doc, written);
    if (isAlias(written)) at ??= rangeOf(written);
    if (node === null || (isScalar(node) && node.value === null)) return;
    const specs = checked.get(node) ?? new Set<KeySpec>();
    if (specs.has(spec)) return;
    checked.set(node, specs.add(spec));
    const v = isScalar(node) ? node.value : undefined;
    const r = at ?? rangeOf(node);
    const typeError = (expected: string) => sink.add('invalid-type', `${where} must be ${expected}.`, r);
    switch (spec.type) {
      case 'string':
        if (!isScalar(node) || typeof v === 'object') return typeError('a string');
        break;
      case 'integer':
        if (!isScalar(node) || !Number.isInteger(v)) return typeError('an integer');
        break;
      case 'number':
        if (!isScalar(node) || typeof v !== 'number') return typeError('a number');
        break;
      case 'string-or-integer':
        if (!isScalar(node) || (typeof v !== 'string' && typeof v !== 'number')) return typeError('a number or a string such as 2..8');
        break;
      case 'scalar':
        if (!isScalar(node)) return typeError('a single value (a string, a number or a boolean), not a mapping or a list');
        break;
      case 'list':
        if (!isSeq(node)) return typeError('a list');
        break;
      case 'map-or-list':
        if (!isMap(node) && !isSeq(node)) return typeError('a mapping of NAME: value or a list of NAME=value');
        break;
      case 'map':
        if (!isMap(node)) return typeError('a mapping of keys');
        break;
    }
    if (isScalar(node)) {
      if (spec.values && !spec.values.includes(String(v))) {
        const guess = didYouMean(String(v), spec.values);
        sink.add(
          'invalid-value',
          `${where} "${String(v)}" is not allowed${guess ? `: did you mean "${guess}"?` : `; use one of ${spec.values.join(', ')}.`}`,
          r,
          {
            // Replacing an alias would not fix its anchor; a block scalar's range takes its line break with it.
            fix: guess && !at && !isBlock(node) ? { kind: 'replace-value', range: r, replacement: guess } : undefined,
          },
        );
      } else if (spec.check) {
        const p = spec.check(v, { plain: node.type === 'PLAIN' });
        if (p) sink.add(p.code, p.message, r);
      }
    } else if (isSeq(node) && spec.item) {
      node.items.forEach((item, i) => walk(item as Node, spec.item as KeySpec, `${where}[${i}]`, at));
    } else if (isMap(node) && (spec.keys || spec.anyKey)) {
      const keys = spec.keys ?? {};
      const bad: Node[] = [];
      const entries = entriesOf(doc, node, bad);
      for (const b of bad) sink.add('invalid-type', `a merge key ('<<') in ${where} must take a mapping or a list of mappings.`, at ?? rangeOf(b));
      const valueOf = (key: string) => {
        const e = entries.find((x) => x.key === key);
        return e && deref(doc, e.value);
      };
      const type = valueOf('type');
      const open = spec.open && !(isScalar(type) && type.value === 'strato');
      if (open) return;
      for (const e of entries) {
        const sub = keys[e.key] ?? spec.anyKey;
        const here = at ?? (e.via ? rangeOf(e.via) : undefined);
        if (!sub) {
          // A key that holds an anchored value is a template for aliases (`base: &b {...}`), no typo of a key; and a
          // guess that is a key of the mapping already would set it twice.
          const template = isNode(e.value) && !!(e.value as { anchor?: string }).anchor;
          const guess = template ? undefined : keyGuess(e.key, Object.keys(keys));
          const setAlready = guess !== undefined && entries.some((x) => x.key === guess);
          const kr = here ?? rangeOf(e.keyNode);
          const advice = !guess
            ? `; use one of ${Object.keys(keys).join(', ')}.`
            : setAlready
              ? `: a typo of '${guess}', which is set already? Remove one of them.`
              : `: did you mean '${guess}'?`;
          sink.add('unknown-key', `'${e.key}' is not a key of ${where}${advice}`, kr, {
            // A merged key is written elsewhere: renaming the alias would not rename it; nor is a key set twice.
            fix: guess && !here && !setAlready ? { kind: 'replace-value', range: kr, replacement: guess } : undefined,
          });
          continue;
        }
        walk(e.value, sub, e.key, here);
      }
      const has = new Set(entries.map((e) => e.key));
      for (const [k, sub] of Object.entries(keys)) {
        if (sub.required && !has.has(k)) sink.add('missing-key', `${where} has no '${k}': add ${k}: ...`, at ?? rangeOf(node.items[0]?.key as Node));
      }
      // A strato backend's key in clear text: move it to an environment reference the tool substitutes.
      const apiKey = entries.find((e) => e.key === 'api_key');
      const key = apiKey && deref(doc, apiKey.value);
      if (apiKey && key && isScalar(key) && typeof key.value === 'string' && !ENV_REFERENCE.test(key.value)) {
        const kr = at ?? rangeOf(apiKey.via ?? apiKey.value);
        // Only a value written here is replaced: an alias's or a merge's would break the mapping it is written in.
        const written = !at && !apiKey.via && !isAlias(apiKey.value) && !isBlock(key);
        sink.add(
          'clear-text-key',
          `the API key is written in clear text: reference an environment variable instead, e.g. \${{ env.${DEFAULT_KEY_VARIABLE} }}, and set it ` +
            `where the tool's server runs.`,
          kr,
          {
            severity: 'warning',
            fix: written ? { kind: 'replace-value', range: kr, replacement: `"\${{ env.${DEFAULT_KEY_VARIABLE} }}"` } : undefined,
          },
        );
      }
    }
  };
  walk(root, { doc: '', type: 'map', keys: table }, model.kind === 'server' ? 'the server configuration' : `a ${model.kind}`);

  // The model the cross-file rules need, read through aliases and merge keys like the walk.
  const located = (key: string): Located<string> | undefined => {
    const l = lookup(doc, root, key);
    const n = l?.value;
    return l && n && isScalar(n) && typeof n.value === 'string' ? { value: n.value, range: rangeOf(l.entry.via ?? l.entry.value) } : undefined;
  };
  model.name = located('name');
  if (model.kind === 'volume') {
    model.region = located('region');
    model.backend = located('backend');
    if (model.region && model.backend?.value === 'strato') {
      const p = checkDatacenter(model.region.value);
      if (p) sink.add(p.code, p.message, model.region.range);
    }
  }
  if (model.kind === 'task') {
    const regions = lookup(doc, root, 'regions');
    if (regions && isSeq(regions.value)) {
      const values = regions.value.items.map((i) => deref(doc, i));
      model.regions = { value: values.map((i) => String(isScalar(i) ? i.value : '')), range: rangeOf(regions.entry.via ?? regions.entry.value) };
    }
    const vols = lookup(doc, root, 'volumes');
    if (vols && isSeq(vols.value)) {
      // Inside an aliased list every mount is reported at the alias.
      const outer = vols.entry.via ?? (isAlias(vols.entry.value) ? vols.entry.value : undefined);
      model.volumesRange = rangeOf(outer ?? vols.entry.value);
      for (const written of vols.value.items as Node[]) {
        const item = deref(doc, written);
        const at = outer ?? (isAlias(written) ? written : undefined);
        if (isScalar(item) && typeof item.value === 'string') {
          const m = /^([^:]+):(.+)$/.exec(item.value);
          const range = rangeOf(at ?? item);
          if (!m) sink.add('invalid-value', `volume mount "${item.value}" must be name:/path, e.g. my-volume:/data.`, range);
          else if (!m[1].startsWith('/') && !m[1].startsWith('~')) model.mounts.push({ name: m[1], path: m[2], range });
        } else if (isMap(item)) {
          const name = lookup(doc, item, 'name');
          const path = lookup(doc, item, 'path')?.value;
          if (name && isScalar(name.value) && typeof name.value.value === 'string') {
            const range = rangeOf(at ?? name.entry.via ?? name.entry.value);
            model.mounts.push({ name: name.value.value, path: String((isScalar(path) ? path.value : undefined) ?? ''), range });
          }
        }
      }
    }
  }
  return { model, sink };
}
