"""A small vendored Agentty plugin SDK (fixture): line framing on asyncio,
requests numbered 1, 2, 3 ..., answers matched by id, handlers run one at a
time."""

import asyncio
import json
import os
import sys

__version__ = "0.3.1"


class Plugin:
    def __init__(self, name, handlers):
        self.name = name
        self.handlers = handlers
        self.next_id = 1
        self.pending = {}

    def send(self, msg):
        sys.stdout.write(json.dumps(msg, separators=(",", ":"), ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def log(self, text):
        sys.stderr.write(self.name + ": " + text + "\n")
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

    async def run(self):
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 24)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        queue = asyncio.Queue()

        async def work():
            while True:
                method, params = await queue.get()
                await self.handlers[method](params, self)

        worker = asyncio.create_task(work())
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
            if "id" in msg and "method" not in msg:
                fut = self.pending.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
                continue
            method = msg.get("method")
            if method == "initialize":
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": {"sdkVersion": __version__, "apiVersion": 1}})
            if method == "shutdown":
                break
            if method in self.handlers:
                queue.put_nowait((method, msg.get("params") or {}))
        worker.cancel()
        self.log("bye")
        sys.stdout.flush()
        os._exit(0)
