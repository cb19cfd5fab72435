// Engine diagnostics as LSP diagnostics, delivered by pull (document and workspace reports with result ids) or by
// push; when a change alters the result of a file other than the edited one, the client is asked to pull again.
import {
  DiagnosticSeverity,
  DocumentDiagnosticReportKind,
  type Diagnostic as LspDiagnostic,
  type DocumentDiagnosticReport,
  type PreviousResultId,
  type WorkspaceDiagnosticReport,
  type WorkspaceDocumentDiagnosticReport,
} from 'vscode-languageserver/node';
import type { Diagnostic, Range, Severity } from '../../engine/src/project';
import { DIAGNOSTIC_SOURCE } from '../../engine/src/protocol/lsp';
import { existsSync } from 'node:fs';
import { keyOf, pathOf } from './paths';
import type { IndexedFile, ProjectRoot, WorkspaceIndex } from './workspaceIndex';

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

export function toLspDiagnostic(d: Diagnostic, root: ProjectRoot, index: WorkspaceIndex): LspDiagnostic {
  const out: LspDiagnostic = { range: d.range, severity: SEVERITY[d.severity], code: d.code, source: DIAGNOSTIC_SOURCE, message: d.message };
  if (d.related?.length) {
    out.relatedInformation = d.related.map((r) => ({ location: { uri: index.uriOf(root, r.file), range: r.range }, message: r.message }));
  }
  return out;
}

/** How results reach the client: pushed, or pulled with an optional refresh request. */
export interface DiagnosticsDelivery {
  mode: 'pull' | 'push';
  publish(uri: string, diagnostics: LspDiagnostic[], version?: number): void;
  /** Undefined when the client does not support `workspace/diagnostic/refresh`. */
  refresh?: () => void;
}

interface Snapshot {
  uri: string;
  diagnostics: Diagnostic[];
  resultId: string;
  lsp?: LspDiagnostic[];
  root?: ProjectRoot;
  /** The file left the index: reported as empty by workspace pulls until the client shows it has that report. */
  gone?: boolean;
  /** How many workspace reports carried the tombstone (bounded: a client may never acknowledge it). */
  goneReports?: number;
}

/** A client that was pulling the document itself when the file went may drop the first empty report. */
const MAX_GONE_REPORTS = 10;

/**
 * How long typing may pause before the diagnostics of an edit are worked out and pushed (or a refresh asked): a burst
 * of keystrokes is analysed once, at its end, rather than once per keystroke (200 keystrokes in a 5,000-line function
 * kept the server 40 s behind). A pull answers at once, with every edit so far.
 */
export const EDIT_SETTLE_MS = 60;

export class DiagnosticsService {
  private readonly snapshots = new Map<string, Snapshot>();
  private nextResultId = 1;
  /** Edited documents not settled yet (settleSoon), and the timer that settles them. */
  private readonly pendingEdits = new Set<string>();
  private pendingTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly index: WorkspaceIndex,
    private readonly delivery: DiagnosticsDelivery,
  ) {}

  /** Settles the edits of a burst of typing once it pauses (EDIT_SETTLE_MS); any other change, or a pull, settles them first. */
  settleSoon(edited: readonly string[]): void {
    for (const uri of edited) this.pendingEdits.add(uri);
    clearTimeout(this.pendingTimer);
    this.pendingTimer = setTimeout(() => this.flush(), EDIT_SETTLE_MS);
  }

  /** Settles the edits settleSoon holds, now. */
  flush(): void {
    clearTimeout(this.pendingTimer);
    this.pendingTimer = undefined;
    if (this.pendingEdits.size === 0) return;
    const edited = [...this.pendingEdits];
    this.pendingEdits.clear();
    this.settle(edited);
  }

  dispose(): void {
    clearTimeout(this.pendingTimer);
  }

  /** The `textDocument/diagnostic` answer. */
  documentReport(uri: string, previousResultId?: string): DocumentDiagnosticReport {
    this.flush();
    const f = this.index.get(uri);
    if (!f) return { kind: DocumentDiagnosticReportKind.Full, items: [] };
    const snap = this.current(f);
    if (previousResultId === snap.resultId) return { kind: DocumentDiagnosticReportKind.Unchanged, resultId: snap.resultId };
    return { kind: DocumentDiagnosticReportKind.Full, resultId: snap.resultId, items: this.lspOf(snap) };
  }

  /** The `workspace/diagnostic` answer: every file that has diagnostics or had a result before (now perhaps none). */
  workspaceReport(previous: readonly PreviousResultId[]): WorkspaceDiagnosticReport {
    this.flush();
    this.dropVanished();
    const before = new Map(previous.map((p) => [keyOf(p.uri), p.value]));
    const items: WorkspaceDocumentDiagnosticReport[] = [];
    for (const f of this.index.files()) {
      const had = before.get(f.key);
      if (had === undefined && this.index.diagnosticsOf(f).length === 0) continue;
      const snap = this.current(f);
      const version = f.open?.version ?? null;
      if (had === snap.resultId) items.push({ kind: DocumentDiagnosticReportKind.Unchanged, uri: f.uri, version, resultId: snap.resultId });
      else items.push({ kind: DocumentDiagnosticReportKind.Full, uri: f.uri, version, resultId: snap.resultId, items: this.lspOf(snap) });
    }
    for (const [key, snap] of this.snapshots) {
      if (!snap.gone) continue;
      snap.goneReports = (snap.goneReports ?? 0) + 1;
      if (before.get(key) === snap.resultId || snap.goneReports > MAX_GONE_REPORTS) {
        this.snapshots.delete(key);
        continue;
      }
      items.push({ kind: DocumentDiagnosticReportKind.Full, uri: snap.uri, version: null, resultId: snap.resultId, items: [] });
    }
    return { items };
  }

  /**
   * Closed files with diagnostics that are no longer on disk: deleted without a watched-file event (some clients
   * send none for deletions made through their own file API). Only files with diagnostics are checked, so a pull
   * costs a few stats at most.
   */
  private dropVanished(): void {
    const gone: Array<{ uri: string; type: 'deleted' }> = [];
    for (const f of this.index.files()) {
      if (f.open || this.index.diagnosticsOf(f).length === 0) continue;
      const p = pathOf(f.uri);
      if (p && !existsSync(p)) gone.push({ uri: f.uri, type: 'deleted' });
    }
    if (gone.length) this.settle(this.index.fileEvents(gone));
  }

  /**
   * Called after every change of the index: finds the files whose diagnostics changed, pushes them, or (pull)
   * asks the client to pull again when a file other than the edited ones changed (cross-file rules).
   */
  settle(edited: readonly string[]): void {
    if (this.pendingEdits.size) {
      edited = [...edited, ...this.pendingEdits];
      this.pendingEdits.clear();
      clearTimeout(this.pendingTimer);
    }
    const editedKeys = new Set(edited.map(keyOf));
    const changed: Array<{ key: string; snap: Snapshot }> = [];
    for (const f of this.index.files()) {
      const diagnostics = this.index.diagnosticsOf(f);
      const snap = this.snapshots.get(f.key);
      if (!snap && diagnostics.length === 0) continue;
      if (snap && !snap.gone && snap.uri === f.uri && sameDiagnostics(snap.diagnostics, diagnostics)) {
        snap.diagnostics = diagnostics; // same content: keep the result id, compare by identity next time
        snap.root = f.root;
        continue;
      }
      changed.push({ key: f.key, snap: this.store(f, diagnostics) });
    }
    for (const [key, snap] of this.snapshots) {
      if (snap.gone || this.index.get(snap.uri)) continue;
      if (snap.diagnostics.length === 0) {
        this.snapshots.delete(key);
        continue;
      }
      const tomb: Snapshot = { uri: snap.uri, diagnostics: [], resultId: String(this.nextResultId++), gone: true };
      this.snapshots.set(key, tomb);
      changed.push({ key, snap: tomb });
    }
    if (this.delivery.mode === 'push') {
      for (const { key, snap } of changed) {
        this.delivery.publish(snap.uri, this.lspOf(snap), this.index.get(snap.uri)?.open?.version);
        if (snap.gone) this.snapshots.delete(key);
      }
    } else if (changed.some((c) => !editedKeys.has(c.key))) {
      this.delivery.refresh?.();
    }
  }

  private current(f: IndexedFile): Snapshot {
    const diagnostics = this.index.diagnosticsOf(f);
    const snap = this.snapshots.get(f.key);
    if (snap && !snap.gone && snap.uri === f.uri && sameDiagnostics(snap.diagnostics, diagnostics)) {
      snap.diagnostics = diagnostics;
      snap.root = f.root;
      return snap;
    }
    return this.store(f, diagnostics);
  }

  private store(f: IndexedFile, diagnostics: Diagnostic[]): Snapshot {
    const snap: Snapshot = { uri: f.uri, diagnostics, resultId: String(this.nextResultId++), root: f.root };
    this.snapshots.set(f.key, snap);
    return snap;
  }

  private lspOf(snap: Snapshot): LspDiagnostic[] {
    if (!snap.lsp) snap.lsp = snap.root ? snap.diagnostics.map((d) => toLspDiagnostic(d, snap.root!, this.index)) : [];
    return snap.lsp;
  }
}

/** Same diagnostics, cheaply: unchanged files keep their very objects; cross-file ones are compared by content. */
function sameDiagnostics(a: readonly Diagnostic[], b: readonly Diagnostic[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !sameDiagnostic(a[i], b[i])) return false;
  return true;
}

function sameDiagnostic(a: Diagnostic, b: Diagnostic): boolean {
  if (a.code !== b.code || a.severity !== b.severity || a.message !== b.message || a.file !== b.file || !sameRange(a.range, b.range)) return false;
  const ra = a.related ?? [];
  const rb = b.related ?? [];
  if (ra.length !== rb.length) return false;
  for (let i = 0; i < ra.length; i++) {
    if (ra[i].file !== rb[i].file || ra[i].message !== rb[i].message || !sameRange(ra[i].range, rb[i].range)) return false;
  }
  return a.fix === b.fix || JSON.stringify(a.fix) === JSON.stringify(b.fix);
}

function sameRange(a: Range, b: Range): boolean {
  return a.start.line === b.start.line && a.start.character === b.start.character && a.end.line === b.end.line && a.end.character === b.end.character;
}
