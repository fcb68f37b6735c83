"""mcp-python: a small fixture MCP server, Python 3 standard library only, for
tapedeck's tests. It speaks MCP 2025-06-18 / 2025-11-25 over stdio (JSON-RPC
2.0, one JSON object per line) and behaves like ../node/main.mjs.

Its output depends on the wall clock and on randomness the way Python
servers' does, so a pinned clock decides whether two runs agree: the tool
`now` returns datetime.now(timezone.utc), random.random() and uuid.uuid4(),
and resources/list cursors are uuid4 values the client must send back.

Tools: echo {text}, add {a, b}, fail (isError), slow {steps=3, ms=20}
(notifications/progress when the call has a progressToken), ask {prompt}
(sampling/createMessage), roots (roots/list), elicit (elicitation/create),
now. Resources: fixture://notes/1..4, two per page. Prompts: greet {name}.
Each tool call runs on its own thread; at stdin EOF it fails what it still
waits on the client for, lets running calls finish and exits 0. Logs go to
stderr.
"""

import json
import random
import sys
import threading
import time
import uuid
from datetime import datetime, timezone

VERSIONS = ["2025-11-25", "2025-06-18"]
NOTES = [{"uri": f"fixture://notes/{n}", "name": f"note-{n}", "mimeType": "text/plain"} for n in range(1, 5)]
STR = {"type": "string"}
TOOLS = [
    {"name": "echo", "description": "Returns its text.",
     "inputSchema": {"type": "object", "properties": {"text": STR}, "required": ["text"]}},
    {"name": "add", "description": "Adds a and b.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}},
    {"name": "fail", "description": "Always fails, as a tool (isError).", "inputSchema": {"type": "object"}},
    {"name": "slow", "description": "Takes steps steps of ms milliseconds, with progress.",
     "inputSchema": {"type": "object", "properties": {"steps": {"type": "integer"}, "ms": {"type": "integer"}}}},
    {"name": "ask", "description": "Asks the client's model (sampling/createMessage).",
     "inputSchema": {"type": "object", "properties": {"prompt": STR}, "required": ["prompt"]}},
    {"name": "roots", "description": "Lists the client's roots.", "inputSchema": {"type": "object"}},
    {"name": "elicit", "description": "Asks the user for a name.", "inputSchema": {"type": "object"}},
    {"name": "now", "description": "The time, a random number and a UUID.", "inputSchema": {"type": "object"}},
]


class RPCError(Exception):
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.error = {"code": code, "message": message}
        if data is not None:
            self.error["data"] = data


def log(*args):
    print("mcp-python:", *args, file=sys.stderr, flush=True)


def text(t, is_error=False):
    result = {"content": [{"type": "text", "text": t}]}
    if is_error:
        result["isError"] = True
    return result


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def js_number(v):
    """A number as JavaScript's String() writes it (3, not 3.0)."""
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e21 else repr(v)


class Server:
    def __init__(self):
        self.write_lock = threading.Lock()
        self.lock = threading.Lock()  # guards everything below
        self.client_caps = {}
        self.next_id = 1
        self.closed = False
        self.pending = {}  # id of our request -> [event, result, error]
        self.cursors = {}  # issued cursor -> offset
        self.threads = []

    def send(self, msg):
        line = json.dumps(msg, separators=(",", ":"), ensure_ascii=False) + "\n"
        with self.write_lock:
            sys.stdout.buffer.write(line.encode("utf-8"))
            sys.stdout.buffer.flush()

    def request(self, method, params):
        """Sends a request to the client and waits for its answer."""
        waiter = [threading.Event(), None, None]
        with self.lock:
            if self.closed:
                raise RuntimeError("stdin closed")
            rid = self.next_id
            self.next_id += 1
            self.pending[rid] = waiter
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        waiter[0].wait()
        if waiter[2] is not None:
            raise RuntimeError(waiter[2])
        return waiter[1]

    def call_tool(self, params):
        args = params.get("arguments") or {}
        token = (params.get("_meta") or {}).get("progressToken")
        name = params.get("name")
        if name == "echo":
            return text(str(args.get("text", "")))
        if name == "add":
            a, b = args.get("a"), args.get("b")
            if not (is_number(a) and is_number(b)):
                return text("add needs numbers a and b", True)
            return text(js_number(a + b))
        if name == "fail":
            return text("the fail tool failed", True)
        if name == "slow":
            steps = args.get("steps") if isinstance(args.get("steps"), int) else 3
            ms = args.get("ms") if isinstance(args.get("ms"), int) else 20
            for i in range(1, steps + 1):
                time.sleep(ms / 1000)
                if token is not None:
                    self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                        "progressToken": token, "progress": i, "total": steps, "message": f"step {i} of {steps}"}})
            return text(f"done after {steps} steps")
        if name in ("ask", "roots", "elicit"):
            capability, method, req = {
                "ask": ("sampling", "sampling/createMessage", {
                    "messages": [{"role": "user", "content": {"type": "text", "text": str(args.get("prompt", ""))}}],
                    "maxTokens": 100}),
                "roots": ("roots", "roots/list", {}),
                "elicit": ("elicitation", "elicitation/create", {
                    "message": "What is your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": STR}, "required": ["name"]}}),
            }[name]
            if capability not in self.client_caps:
                return text(f"the client did not declare the {capability} capability", True)
            try:
                res = self.request(method, req)
            except RuntimeError as err:
                return text(f"{method}: {err}", True)
            if name == "ask":
                return text(str(res.get("content", {}).get("text")))
            if name == "roots":
                uris = [r.get("uri") for r in res.get("roots", [])]
                return text(f"{len(uris)} root(s): {' '.join(uris)}")
            if res.get("action") == "accept":
                return text(f"Hello, {res.get('content', {}).get('name')}!")
            return text(f"elicitation {res.get('action')}")
        if name == "now":
            now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            return text(f"now {now} random {random.random()} uuid {uuid.uuid4()}")
        raise RPCError(-32602, f"unknown tool: {name}")

    def resources_list(self, params):
        start = 0
        if "cursor" in params:
            with self.lock:
                if params["cursor"] not in self.cursors:
                    raise RPCError(-32602, f"invalid cursor {json.dumps(params['cursor'])}")
                start = self.cursors[params["cursor"]]
        end = min(start + 2, len(NOTES))
        result = {"resources": NOTES[start:end]}
        if end < len(NOTES):
            cursor = str(uuid.uuid4())
            with self.lock:
                self.cursors[cursor] = end
            result["nextCursor"] = cursor
        return result

    def handle(self, method, params):
        if method == "initialize":
            self.client_caps = params.get("capabilities") or {}
            version = params.get("protocolVersion")
            return {
                "protocolVersion": version if version in VERSIONS else VERSIONS[0],
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                "serverInfo": {"name": "mcp-fixture-python", "version": "1.0.0"},
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": TOOLS}
        if method == "tools/call":
            return self.call_tool(params)
        if method == "resources/list":
            return self.resources_list(params)
        if method == "resources/read":
            for note in NOTES:
                if note["uri"] == params.get("uri"):
                    return {"contents": [{"uri": note["uri"], "mimeType": "text/plain",
                                          "text": f"Note {note['uri'][-1]} of {len(NOTES)}."}]}
            raise RPCError(-32002, "Resource not found", {"uri": params.get("uri")})
        if method == "prompts/list":
            return {"prompts": [{"name": "greet", "description": "Greets someone.",
                                 "arguments": [{"name": "name", "required": True}]}]}
        if method == "prompts/get":
            if params.get("name") != "greet":
                raise RPCError(-32602, f"unknown prompt: {params.get('name')}")
            who = (params.get("arguments") or {}).get("name")
            if not who:
                raise RPCError(-32602, "prompt greet: argument name is required")
            return {"description": "greet",
                    "messages": [{"role": "user", "content": {"type": "text", "text": f"Say hello to {who}."}}]}
        raise RPCError(-32601, f"method not found: {method}")

    def answer(self, msg):
        try:
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": self.handle(msg["method"], msg.get("params") or {})})
        except RPCError as err:
            self.send({"jsonrpc": "2.0", "id": msg["id"], "error": err.error})
        except Exception as err:  # a bug in a handler: answer, do not die
            self.send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32603, "message": repr(err)}})

    def on_line(self, line):
        try:
            msg = json.loads(line)
        except ValueError as err:
            log("not JSON:", err)
            self.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": f"parse error: {err}"}})
            return
        if "method" not in msg:
            with self.lock:
                waiter = self.pending.pop(msg.get("id"), None)
            if waiter is None:
                log("answer to unknown request", msg.get("id"))
                return
            waiter[1] = msg.get("result")
            waiter[2] = (msg.get("error") or {}).get("message") if "error" in msg else None
            waiter[0].set()
            return
        if "id" not in msg:
            log("notification", msg["method"])
            return
        if msg["method"] == "tools/call":
            t = threading.Thread(target=self.answer, args=(msg,))
            self.threads.append(t)
            t.start()
        else:
            self.answer(msg)

    def run(self):
        log("started")
        for raw in sys.stdin.buffer:
            line = raw.decode("utf-8", errors="replace").strip()
            if line:
                self.on_line(line)
        with self.lock:
            self.closed = True
            for waiter in self.pending.values():
                waiter[2] = "stdin closed"
                waiter[0].set()
            self.pending.clear()
        for t in self.threads:
            t.join()
        log("stdin closed, bye")


if __name__ == "__main__":
    Server().run()
