// One TreeDataProvider for the three views: it renders the plain TreeNodes built by the pure modules
// (endpointTree.ts, jobs.ts) and knows each node's parent, so that nodes can be revealed.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TreeNode } from './endpointTree';

export class NodeTreeProvider implements vscode.TreeDataProvider<TreeNode> {
  private readonly changed = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private roots: TreeNode[] = [];
  private parents = new Map<string, TreeNode | undefined>();
  /** What the view shows, as text: a refresh that changes nothing redraws nothing (the Jobs view polls every second). */
  private shown = '[]';

  constructor(
    private readonly clickCommand?: (n: TreeNode) => vscode.Command | undefined,
    private readonly expandAll = false,
  ) {}

  set(roots: TreeNode[]): void {
    const text = JSON.stringify(roots);
    // Unchanged: the nodes VS Code holds stay the ones its menus and buttons hand back to commands.
    if (text === this.shown) return;
    this.shown = text;
    this.roots = roots;
    this.parents = new Map();
    const walk = (nodes: TreeNode[], parent: TreeNode | undefined) => {
      for (const n of nodes) {
        this.parents.set(n.id, parent);
        walk(n.children ?? [], n);
      }
    };
    walk(roots, undefined);
    this.changed.fire(undefined);
  }

  nodes(): TreeNode[] {
    return this.roots;
  }

  find(pred: (n: TreeNode) => boolean): TreeNode | undefined {
    const stack = [...this.roots];
    while (stack.length) {
      const n = stack.shift()!;
      if (pred(n)) return n;
      stack.push(...(n.children ?? []));
    }
    return undefined;
  }

  getTreeItem(n: TreeNode): vscode.TreeItem {
    const collapsible = n.children?.length
      ? this.expandAll
        ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.Collapsed
      : vscode.TreeItemCollapsibleState.None;
    const item = new vscode.TreeItem(n.label, collapsible);
    item.id = n.id;
    item.description = n.description;
    item.tooltip = n.tooltip;
    item.contextValue = n.contextValue;
    if (n.icon) item.iconPath = new vscode.ThemeIcon(n.icon, n.iconColor ? new vscode.ThemeColor(n.iconColor) : undefined);
    if (n.location) item.resourceUri = vscode.Uri.file(path.join(n.location.root, n.location.file));
    item.command = this.clickCommand?.(n);
    return item;
  }

  getChildren(n?: TreeNode): TreeNode[] {
    return n ? (n.children ?? []) : this.roots;
  }

  getParent(n: TreeNode): TreeNode | undefined {
    return this.parents.get(n.id);
  }
}

/** The command that opens a node's source location. */
export function openLocationCommand(n: TreeNode): vscode.Command | undefined {
  if (!n.location) return undefined;
  const uri = vscode.Uri.file(path.join(n.location.root, n.location.file));
  const pos = new vscode.Position(n.location.line, 0);
  return { title: 'Open', command: 'vscode.open', arguments: [uri, { selection: new vscode.Range(pos, pos) }] };
}
