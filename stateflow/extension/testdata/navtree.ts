// Test helper extension (ours): /sf-test-navigate <entryId> moves the
// session's leaf with ctx.navigateTree (commands only; RPC has no tree
// navigation), so the StateFlow tests can fire session_tree.
export default function (pi: any) {
  pi.registerCommand("sf-test-navigate", {
    description: "test only: navigate the session tree to an entry",
    handler: async (args: string, ctx: any) => {
      const r = await ctx.navigateTree(args.trim(), { summarize: false });
      ctx.ui.notify("navigated " + JSON.stringify(r), "info");
    },
  });
}
