// cosmica-node: an Agentty fixture plugin (API 1) that behaves as the
// Cosmica notes plugin does, for tapedeck's Keep-it tests: its settings
// come from a home folder a variable names, its notes have random names
// and times, and what it shows depends on the clock. Plain Node >= 18, on
// the vendored SDK of ../clock-node (sdk/).
//
// - Settings: $COSMICA_HOME/config.json, {"notes": "notes"}: the notes
//   folder, relative to COSMICA_HOME. Without them (no COSMICA_HOME, or no
//   config.json in it) it keeps its notes in ~/CosmicaNotes, as Cosmica
//   does: a replay that gives it an empty home writes into the real one.
// - panel/open draws the notes, newest first, each "NAME · saved this
//   minute" or "saved N minutes ago" (its "created" time against
//   Date.now()), an input "title" and the buttons "new" and "tick".
// - ui/event: "title" change remembers the title; "new" click writes
//   note-<8 hex from Math.random>.md in the notes folder with an exclusive
//   create (EEXIST when the name is taken: said in a toast), holding the
//   title and "created <ISO time>", then asks the host prompt/inject
//   "Summarise NAME (created ISO)" and draws the list again; "tick" click
//   draws it again (the times move on).
// Every step logs a line on stderr; shutdown or stdin EOF ends it at once.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { plugin } from "../clock-node/sdk/index.mjs";

function notesDir() {
  const home = process.env.COSMICA_HOME;
  const config = home ? join(home, "config.json") : "";
  if (config && existsSync(config)) {
    const c = JSON.parse(readFileSync(config, "utf8"));
    return join(home, c.notes ?? "notes");
  }
  return join(homedir(), "CosmicaNotes");
}

const ago = (ms) => {
  const min = Math.floor(ms / 60000);
  if (min < 1) return "saved this minute";
  return min === 1 ? "saved 1 minute ago" : "saved " + min + " minutes ago";
};

let title = "";

function notes(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".md")) continue;
    const text = readFileSync(join(dir, name), "utf8");
    const m = /created (\S+)/.exec(text);
    out.push({ name, at: m ? Date.parse(m[1]) : 0 });
  }
  return out.sort((a, b) => b.at - a.at || a.name.localeCompare(b.name));
}

async function draw(api) {
  const now = Date.now();
  const list = notes(notesDir());
  await api.request("ui/setPanel", {
    tree: {
      type: "column",
      children: [
        { type: "text", text: "Cosmica: " + list.length + " notes", style: "title" },
        { type: "list", id: "notes", items: list.map((n) => ({ id: n.name, title: n.name, subtitle: ago(now - n.at) })) },
        { type: "input", id: "title", placeholder: "title", value: title },
        { type: "button", id: "new", label: "New note" },
        { type: "button", id: "tick", label: "Refresh" },
      ],
    },
  });
}

plugin("cosmica-node", {
  async initialize(params, api) {
    api.log("initialized " + (params.plugin?.id ?? "?") + ", notes in " + (process.env.COSMICA_HOME ? "COSMICA_HOME" : "the home folder"));
  },
  async "panel/open"(params, api) {
    await draw(api);
  },
  async "ui/event"(params, api) {
    if (params.element === "title" && params.event === "change") {
      title = String(params.value ?? "");
      return;
    }
    if (params.element === "tick") return draw(api);
    if (params.element !== "new") return;
    const dir = notesDir();
    mkdirSync(dir, { recursive: true });
    const name = "note-" + Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, "0") + ".md";
    const created = new Date().toISOString();
    try {
      writeFileSync(join(dir, name), "# " + (title || "untitled") + "\ncreated " + created + "\n", { flag: "wx" });
      api.log("wrote " + name);
    } catch (e) {
      api.log("could not write " + name + ": " + e.code);
      api.notify("ui/notify", { message: "could not save " + name + ": " + e.code, kind: "error" });
      return;
    }
    const answer = await api.request("prompt/inject", { text: "Summarise " + name + " (created " + created + ")" });
    api.log("prompt " + (answer.result?.status ?? "failed"));
    await draw(api);
  },
});
