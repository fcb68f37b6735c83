// A small vendored Agentty plugin SDK (fixture): line framing, requests
// numbered 1, 2, 3 …, answers matched by id, handlers run one at a time.
import { createInterface } from "node:readline";

export const sdkVersion = "0.3.1";

export function plugin(name, handlers) {
  let nextId = 1;
  const pending = new Map();
  const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
  const api = {
    log: (text) => process.stderr.write(name + ": " + text + "\n"),
    notify: (method, params) => send({ jsonrpc: "2.0", method, params }),
    request(method, params) {
      const id = nextId++;
      send({ jsonrpc: "2.0", id, method, params });
      return new Promise((resolve) => pending.set(id, resolve));
    },
  };
  const bye = () => {
    api.log("bye");
    process.exit(0);
  };
  let queue = Promise.resolve();
  createInterface({ input: process.stdin }).on("line", (line) => {
    if (line.trim() === "") return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      api.log("ignoring non-JSON line");
      return;
    }
    if (msg.id !== undefined && msg.method === undefined) {
      const resolve = pending.get(msg.id);
      pending.delete(msg.id);
      resolve?.(msg);
      return;
    }
    if (msg.method === "initialize") {
      send({ jsonrpc: "2.0", id: msg.id, result: { sdkVersion, apiVersion: 1 } });
    }
    if (msg.method === "shutdown") return bye();
    const handler = handlers[msg.method];
    if (handler) queue = queue.then(() => handler(msg.params ?? {}, api));
  }).on("close", bye);
  return api;
}
