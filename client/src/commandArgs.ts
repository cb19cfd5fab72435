// What a command was invoked with, from every place it is offered: nothing (the palette), an object of VS Code's own
// (a view's title bar passes `{$treeViewId, ...}` or the focused item), a tree item (its TreeNode), a code lens
// (EndpointCommandArgs), a Uri (the explorer), a string, or options (scripts and tests). Each command reads what it
// understands here and ignores the rest, so that no place can hand a command something it throws on. Pure.
import { isEndpointCommandArgs } from '../../engine/src/protocol';
import type { TreeNode } from './endpointTree';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** A Uri, of this or of another copy of the vscode module: `scheme` and `fsPath` strings. */
function uriPath(v: unknown): string | undefined {
  if (!isObj(v)) return undefined;
  const u = v as { scheme?: unknown; fsPath?: unknown; toString(): string };
  if (typeof u.scheme !== 'string' || typeof u.fsPath !== 'string') return undefined;
  return u.scheme === 'file' ? u.fsPath : u.toString();
}

function isTreeNode(v: unknown): v is TreeNode {
  return isObj(v) && typeof v.id === 'string' && typeof v.label === 'string';
}

/** A file, folder or URI (string) naming the project a command acts on, when the argument names one. */
export function folderHintOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg || undefined;
  const uri = uriPath(arg);
  if (uri) return uri;
  if (!isObj(arg)) return undefined;
  if (isEndpointCommandArgs(arg)) return arg.uri;
  if (isTreeNode(arg)) return arg.root ?? arg.location?.root;
  return str(arg.folder);
}

/** The environment a string or options (`{environment}`) name; never read from a tree node (see environmentNodeOf). */
export function environmentOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg || undefined;
  return isObj(arg) && !isTreeNode(arg) && !uriPath(arg) ? str(arg.environment) : undefined;
}

/**
 * The environment of an environment's item (Environments view), or else what environmentOf reads. Only for commands
 * that act on an environment item (undeploy, env get, the typed client): a deploy never takes its target from
 * whichever node happens to be focused.
 */
export function environmentItemOf(arg: unknown): string | undefined {
  if (isTreeNode(arg)) return arg.contextValue === 'strato.environment' ? arg.environment : undefined;
  return environmentOf(arg);
}

/** A boolean option of an options object (e.g. `confirm: false`), undefined otherwise. */
export function flagOf(arg: unknown, key: string): boolean | undefined {
  return isObj(arg) && typeof arg[key] === 'boolean' ? (arg[key] as boolean) : undefined;
}

/** A string option (e.g. `file`) of an options object, or of a node with options added (scripts and tests). */
export function optionOf(arg: unknown, key: string): string | undefined {
  return isObj(arg) && !uriPath(arg) ? str(arg[key]) : undefined;
}

export interface EndpointTarget {
  /** Its name in the code. */
  endpoint: string;
  /** Set when the node is one deployment of it (or the options name one). */
  environment?: string;
  folder?: string;
}

/** The endpoint a tree node, a code lens argument or options (`{endpoint, environment?}`) stand for. */
export function endpointTargetOf(arg: unknown): EndpointTarget | undefined {
  if (isEndpointCommandArgs(arg)) return { endpoint: arg.endpoint, folder: arg.uri };
  if (isTreeNode(arg)) return arg.endpoint ? { endpoint: arg.endpoint, environment: arg.environment, folder: arg.root } : undefined;
  if (isObj(arg) && str(arg.endpoint)) return { endpoint: arg.endpoint as string, environment: str(arg.environment), folder: str(arg.folder) };
  return undefined;
}

/** A command's argument as Run, Debug and Deploy take it: a node's code-lens arguments, or the argument as it is. */
export function endpointArgsOf(arg: unknown): unknown {
  return isTreeNode(arg) && arg.endpointArgs ? arg.endpointArgs : arg;
}

/** The job id of a Jobs view node (`job:<id>`), or an id given as is. */
export function jobIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg || undefined;
  if (isTreeNode(arg) && arg.id.startsWith('job:')) return arg.id.slice(4);
  return isObj(arg) ? str(arg.jobId) : undefined;
}
