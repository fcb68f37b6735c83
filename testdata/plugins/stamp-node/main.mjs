// stamp-node: an Agentty fixture plugin (API 1) for tapedeck's pinned-clock
// tests, whose output depends on the wall clock to the millisecond, on
// crypto randomness and on the state it keeps. Plain Node >= 18, its SDK
// the one of ../clock-node (sdk/); ../stamp-python/main.py says the same
// on stdout.
//
// - STAMP_SLOW_START_MS=N makes it start N ms slower (it blocks before it
//   reads stdin);
// - panel/open shows "opened at HH:MM:SS" (local time, so TZ matters),
//   "created_at" with milliseconds (UTC) and an id from crypto.randomUUID;
// - ui/event "save" creates note-<randomUUID>-<getRandomValues>.txt in
//   STAMP_HOME (default the system's temporary folder) and fails with
//   EEXIST when that file is there already: a plugin that keeps state. It
//   says "saved NAME at CREATED_AT" or "could not save NAME: CODE".
// Every step logs a line on stderr; shutdown or stdin EOF ends it at once.
import { writeFileSync } from "node:fs";
import { randomUUID, getRandomValues } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { plugin } from "../clock-node/sdk/index.mjs";

const slow = Number(process.env.STAMP_SLOW_START_MS ?? 0);
if (slow > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, slow);
const home = process.env.STAMP_HOME || tmpdir();
const pad = (n) => String(n).padStart(2, "0");
const hms = (d) => pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
const uuid = () => (globalThis.crypto?.randomUUID ? globalThis.crypto.randomUUID() : randomUUID());

plugin("stamp-node", {
  async initialize(params, api) {
    api.log("initialized " + (params.plugin?.id ?? "?"));
  },
  async "panel/open"(params, api) {
    const d = new Date();
    api.log("panel open");
    await api.request("ui/setPanel", {
      tree: {
        type: "column",
        children: [
          { type: "text", text: "opened at " + hms(d) },
          { type: "text", text: "created_at " + d.toISOString() },
          { type: "text", text: "id " + uuid() },
          { type: "button", id: "save", label: "Save" },
        ],
      },
    });
  },
  async "ui/event"(params, api) {
    if (params.element !== "save") return;
    const tag = Buffer.from(getRandomValues(new Uint8Array(4))).toString("hex");
    const name = "note-" + randomUUID() + "-" + tag + ".txt";
    try {
      writeFileSync(join(home, name), "note\n", { flag: "wx" });
      api.log("wrote " + name);
      api.notify("ui/notify", { message: "saved " + name + " at " + new Date(Date.now()).toISOString(), kind: "success" });
    } catch (e) {
      api.log("could not write " + name + ": " + e.code);
      api.notify("ui/notify", { message: "could not save " + name + ": " + e.code, kind: "error" });
    }
  },
});
