// One orchestration YAML file -> its model (kind, name, region, mounts) and its diagnostics, with positions
// taken from the `yaml` package's own node ranges. Cross-file rules live in workspace.ts.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { didYouMean } from '../catalog';
import { DiagnosticSink } from '../project/rules';
import type { Range } from '../project/model';
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

export function analyzeDstack(file: string, text: string): { model: DstackFile; sink: DiagnosticSink } {
  const sink = new DiagnosticSink(file);
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  const pos = (offset: number) => {
    const p = lc.linePos(Math.min(offset, text.length));
    return { line: p.line - 1, character: p.col - 1 };
  };
  const rangeOf = (n: { range?: [number, number, number] | null } | null | undefined): Range => {
    const r = n?.range ?? [0, 0, 0];
    return { start: pos(r[0]), end: pos(r[1]) };
  };
  const model: DstackFile = { file, kind: 'other', mounts: [] };
  for (const e of doc.errors) {
    sink.add('syntax-error', `YAML syntax error: ${e.message.split('\n')[0]}; fix the indentation or quoting here.`, {
      start: pos(e.pos[0]),
      end: pos(e.pos[1]),
    });
  }
  if (doc.errors.length) return { model, sink };
  const root = doc.contents as Node | null;
  if (root === null) return { model, sink };
  if (!isMap(root)) {
    sink.add('invalid-type', 'the file must be a mapping of keys (type: task, name: ...), not a single value or a list.', rangeOf(root));
    return { model, sink };
  }

  let table: Record<string, KeySpec> | undefined;
  if (dstackKindOf(file) === 'server') {
    model.kind = 'server';
    table = SERVER;
  } else {
    const t = root.get('type');
    model.kind = t === 'task' ? 'task' : t === 'volume' ? 'volume' : 'other';
    table = t === 'task' ? TASK : t === 'volume' ? VOLUME : undefined;
    if (t === undefined) sink.add('missing-key', "the configuration has no 'type': add type: task or type: volume.", rangeOf(root.items[0]?.key as Node));
    else if (!table && !['service', 'dev-environment', 'fleet', 'gateway'].includes(String(t))) {
      const guess = didYouMean(String(t), ['task', 'volume']);
      sink.add(
        'invalid-value',
        `type "${String(t)}" is not a configuration type${guess ? `: did you mean "${guess}"?` : '; use task or volume.'}`,
        rangeOf(root.get('type', true) as Node),
      );
    }
  }
  if (!table) return { model, sink };

  const walk = (node: Node | null, spec: KeySpec, where: string): void => {
    if (node === null || (isScalar(node) && node.value === null)) return;
    const v = isScalar(node) ? node.value : undefined;
    const r = rangeOf(node);
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
      case 'list':
        if (!isSeq(node)) return typeError('a list');
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
            fix: guess ? { kind: 'replace-value', range: r, replacement: guess } : undefined,
          },
        );
      } else if (spec.check) {
        const p = spec.check(v);
        if (p) sink.add(p.code, p.message, r);
      }
    } else if (isSeq(node) && spec.item) {
      node.items.forEach((item, i) => walk(item as Node, spec.item as KeySpec, `${where}[${i}]`));
    } else if (isMap(node) && (spec.keys || spec.anyKey)) {
      const keys = spec.keys ?? {};
      const open = spec.open && node.get('type') !== 'strato';
      if (open) return;
      for (const pair of node.items) {
        const k = isScalar(pair.key) ? String(pair.key.value) : '';
        const sub = keys[k] ?? spec.anyKey;
        if (!sub) {
          const guess = didYouMean(k, Object.keys(keys));
          const kr = rangeOf(pair.key as Node);
          sink.add(
            'unknown-key',
            `'${k}' is not a key of ${where}${guess ? `: did you mean '${guess}'?` : `; use one of ${Object.keys(keys).join(', ')}.`}`,
            kr,
            {
              fix: guess ? { kind: 'replace-value', range: kr, replacement: guess } : undefined,
            },
          );
          continue;
        }
        walk(pair.value as Node, sub, k);
      }
      for (const [k, sub] of Object.entries(keys)) {
        if (sub.required && !node.has(k)) sink.add('missing-key', `${where} has no '${k}': add ${k}: ...`, rangeOf(node.items[0]?.key as Node));
      }
      // A strato backend's key in clear text: move it to an environment reference the tool substitutes.
      const key = node.get('api_key', true) as Node | undefined;
      if (key && isScalar(key) && typeof key.value === 'string' && !ENV_REFERENCE.test(key.value)) {
        const kr = rangeOf(key);
        sink.add(
          'clear-text-key',
          `the API key is written in clear text: reference an environment variable instead, e.g. \${{ env.${DEFAULT_KEY_VARIABLE} }}, and set it ` +
            `where the tool's server runs.`,
          kr,
          {
            severity: 'warning',
            fix: { kind: 'replace-value', range: kr, replacement: `"\${{ env.${DEFAULT_KEY_VARIABLE} }}"` },
          },
        );
      }
    }
  };
  walk(root, { doc: '', type: 'map', keys: table }, model.kind === 'server' ? 'the server configuration' : `a ${model.kind}`);

  // The model the cross-file rules need.
  const located = (key: string): Located<string> | undefined => {
    const n = root.get(key, true) as Node | undefined;
    return n && isScalar(n) && typeof n.value === 'string' ? { value: n.value, range: rangeOf(n) } : undefined;
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
    const regions = root.get('regions', true) as Node | undefined;
    if (regions && isSeq(regions)) model.regions = { value: regions.items.map((i) => String(isScalar(i) ? i.value : '')), range: rangeOf(regions) };
    const vols = root.get('volumes', true) as Node | undefined;
    if (vols && isSeq(vols)) {
      model.volumesRange = rangeOf(vols);
      for (const item of vols.items) {
        if (isScalar(item) && typeof item.value === 'string') {
          const m = /^([^:]+):(.+)$/.exec(item.value);
          if (!m) sink.add('invalid-value', `volume mount "${item.value}" must be name:/path, e.g. my-volume:/data.`, rangeOf(item));
          else if (!m[1].startsWith('/') && !m[1].startsWith('~')) model.mounts.push({ name: m[1], path: m[2], range: rangeOf(item) });
        } else if (isMap(item) && typeof item.get('name') === 'string') {
          model.mounts.push({ name: String(item.get('name')), path: String(item.get('path') ?? ''), range: rangeOf(item.get('name', true) as Node) });
        }
      }
    }
  }
  return { model, sink };
}
