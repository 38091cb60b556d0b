import { registerStateFlowModule, type StateFlowModule } from "../pikit-stateflow/modules.ts";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

type Notes = { entries: string[] };
const notes: StateFlowModule<Notes> = {
  immutable: false,
  id: "x_acme_notes",
  apiVersion: 1,
  schemaVersion: 1,
  validate(value): value is Notes {
    return typeof value === "object" && value !== null && !Array.isArray(value)
      && "entries" in value && Array.isArray(value.entries)
      && value.entries.every(item => typeof item === "string");
  },
  context(content) { return content ? [{ kind: "data", value: content }] : []; },
};

export default function (pi: ExtensionAPI) {
  let unregister: (() => void) | undefined;
  pi.on("session_start", (_event, ctx) => {
    unregister?.();
    unregister = registerStateFlowModule(ctx.sessionManager, notes);
  });
  pi.on("session_shutdown", () => unregister?.());
}
