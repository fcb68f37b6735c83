// clock-node: an Agentty fixture plugin (API 1) whose output depends on
// the wall clock and on Math.random, for tapedeck's pinned-clock tests.
// Plain Node >= 18, its SDK vendored in sdk/.
//
// - panel/open shows "draft saved N minutes ago", N counted from
//   CLOCK_SAVED_AT (Unix milliseconds; the time a real plugin would keep in
//   its data folder) to Date.now();
// - ui/event "save" picks a random file name with Math.random, writes the
//   draft there (in CLOCK_DIR, default the system's temporary folder,
//   asynchronously) and says "saved draft-xxxxxxxx.txt".
// Every step logs a line on stderr; shutdown or stdin EOF ends it at once.
import { writeFile, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { plugin } from "./sdk/index.mjs";

const savedAt = Number(process.env.CLOCK_SAVED_AT ?? Date.now());
const dir = process.env.CLOCK_DIR ?? tmpdir();

plugin("clock-node", {
  async initialize(params, api) {
    api.log("initialized " + (params.plugin?.id ?? "?"));
  },
  async "panel/open"(params, api) {
    const minutes = Math.floor((Date.now() - savedAt) / 60000);
    api.log("panel open, " + minutes + " minutes since the save");
    await api.request("ui/setPanel", {
      tree: {
        type: "column",
        children: [
          { type: "text", text: "draft saved " + minutes + " minutes ago", style: "muted" },
          { type: "button", id: "save", label: "Save" },
        ],
      },
    });
  },
  async "ui/event"(params, api) {
    if (params.element !== "save") return;
    const name = "draft-" + Math.random().toString(36).slice(2, 10).padEnd(8, "0") + ".txt";
    const path = join(dir, name);
    await writeFile(path, "draft\n");
    // Replays of a pinned session pick the same name: one run at a time
    // may find it gone.
    await unlink(path).catch(() => {});
    api.log("wrote " + name);
    api.notify("ui/notify", { message: "saved " + name, kind: "success" });
  },
});
