"""waiter-python: an Agentty fixture plugin (API 1) that waits the way real
plugins do, for tapedeck's replay tests. Python 3 standard library only
(asyncio); ../waiter-node/main.mjs behaves the same on stdout.

- initialize is answered at once; activation then reads the manifest in a
  worker thread, and later messages wait for it;
- the search input is debounced: ui/setPanel with the results goes out
  350 ms after the last change, and the query is committed only then;
- the "run" button starts a child process that takes 700 ms and reports
  the committed query when it ends;
- command/execute "ask" sleeps 1.2 s, then asks the host (prompt/inject)
  about the last build, and reports the answer.
Every step logs a line on stderr. Pending work does not hold up shutdown:
on shutdown or stdin EOF it exits at once.

Environment (for tests): WAITER_LABEL replaces "results for";
WAITER_EXTRA=1 sends one more notification (ui/setBadge) after a build.
"""

import asyncio
import json
import os
import sys

LABEL = os.environ.get("WAITER_LABEL", "results for")
EXTRA = os.environ.get("WAITER_EXTRA") == "1"
HERE = os.path.dirname(os.path.abspath(__file__))


class Plugin:
    def __init__(self):
        self.next_id = 1
        self.pending = {}  # our request id -> future
        self.debounce = None
        self.query = ""  # committed by the debounce
        self.last_build = "none"
        self.tasks = set()

    def send(self, msg):
        sys.stdout.write(json.dumps(msg, separators=(",", ":"), ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def log(self, text):
        sys.stderr.write("waiter-python: " + text + "\n")
        sys.stderr.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return fut

    def panel(self, children):
        return self.request("ui/setPanel", {"tree": {"type": "column", "children": children}})

    def spawn(self, coro):
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def search(self, value):
        if self.debounce is not None:
            self.debounce.cancel()

        def fire():
            self.query = value
            self.log("search " + value)
            self.panel([
                {"type": "input", "id": "q", "value": value},
                {"type": "text", "text": LABEL + " " + value},
                {"type": "button", "id": "run", "label": "Run"},
            ])

        self.debounce = asyncio.get_running_loop().call_later(0.35, fire)

    async def build(self):
        q = self.query
        self.log("build started for " + q)
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import time; time.sleep(0.7); print('built')",
            stdout=asyncio.subprocess.PIPE)
        out, _ = await child.communicate()
        self.last_build = "%s: %s (exit %d)" % (q, out.decode().strip(), child.returncode)
        self.log("build done")
        self.notify("ui/notify", {"message": "build " + self.last_build, "kind": "success"})
        if EXTRA:
            self.notify("ui/setBadge", {"text": "new"})

    async def ask(self):
        self.log("thinking")
        await asyncio.sleep(1.2)
        answer = await self.request("prompt/inject", {"text": "Explain the build of " + self.last_build})
        self.log("asked")
        status = (answer.get("result") or {}).get("status", "failed")
        self.notify("ui/notify", {"message": "prompt " + status, "kind": "info"})

    async def initialize(self, rid):
        self.send({"jsonrpc": "2.0", "id": rid, "result": {"sdkVersion": "waiter-1", "apiVersion": 1}})

        def read():
            with open(os.path.join(HERE, "agentty-plugin.json"), encoding="utf-8") as f:
                return json.load(f)
        manifest = await asyncio.to_thread(read)
        self.log("activated " + manifest["id"])

    async def handle(self, msg):
        """Handles one message; the next waits until this returns (so
        activation holds up what follows), while long work runs beside."""
        if "id" in msg and "method" not in msg:
            fut = self.pending.pop(msg["id"], None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
            return True
        p = msg.get("params") or {}
        method = msg.get("method")
        if method == "initialize":
            await self.initialize(msg["id"])
        elif method == "panel/open":
            self.panel([{"type": "input", "id": "q", "placeholder": "Search"},
                        {"type": "button", "id": "run", "label": "Run"}])
        elif method == "ui/event":
            if p.get("element") == "q" and p.get("event") == "change":
                self.search(str(p.get("value")))
            if p.get("element") == "run" and p.get("event") == "click":
                self.spawn(self.build())
        elif method == "command/execute":
            if p.get("command") == "ask":
                self.spawn(self.ask())
        elif method == "shutdown":
            return False
        return True

    async def run(self):
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 24)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                break
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                self.log("ignoring non-JSON line")
                continue
            if not await self.handle(msg):
                break
        self.log("bye")
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    asyncio.run(Plugin().run())
