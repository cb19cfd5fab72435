// A development extension that runs the in-host tests of test/vscode/vsix.test.ts. Unlike extensionTestsPath (whose
// host VS Code always trusts), it starts in the workspace's real trust state, so Restricted Mode can be tested.
exports.activate = function activate() {
  if (!process.env.STRATO_HARNESS_DIR) return;
  setTimeout(() => {
    require('../inhost/vsix.js')
      .run()
      .catch((e) => console.error(`strato harness: ${(e && e.stack) || e}`));
  }, 0);
};
exports.deactivate = function deactivate() {};
