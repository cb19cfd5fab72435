// URIs and paths: the index keys files by file-system path (two spellings of one URI are one file) and builds
// URIs for files the client never named, encoded the way VS Code encodes them.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The file-system path of a `file:` URI, normalised; undefined for other schemes (untitled:, vscode-notebook-cell:). */
export function pathOf(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    const p = path.normalize(fileURLToPath(uri));
    // Windows drive letters arrive in either case.
    return /^[A-Z]:/.test(p) ? p[0].toLowerCase() + p.slice(1) : p;
  } catch {
    return undefined;
  }
}

/** A stable key for a document: its path, or the URI itself when it has none. */
export function keyOf(uri: string): string {
  return pathOf(uri) ?? uri;
}

/** Only the RFC 3986 unreserved characters stay as they are, like VS Code's URI serialisation. */
function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The URI of `rel` (a POSIX path) inside the folder `folderUri`. */
export function childUri(folderUri: string, rel: string): string {
  return `${folderUri.replace(/\/+$/, '')}/${rel.split('/').map(encodeSegment).join('/')}`;
}

/** `rel` of `file` inside `folder` as a POSIX path, or undefined when the file is not inside it. */
export function relativeTo(folder: string, file: string): string | undefined {
  const rel = path.relative(folder, file);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join('/');
}

/** A file name for documents without a path (an untitled buffer): the last segment of the URI, as a .py name. */
export function looseName(uri: string): string {
  const last =
    decodeURIComponentSafe(
      uri
        .replace(/[?#].*$/, '')
        .split(/[/:]/)
        .pop() ?? '',
    ) || 'untitled';
  return last.endsWith('.py') ? last : `${last.replace(/[^A-Za-z0-9_]/g, '_')}.py`;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
