"""clock-python: an Agentty fixture plugin (API 1) whose output depends on
the wall clock and on the random module, for tapedeck's pinned-clock tests.
Python 3 standard library only, its SDK vendored in agentty_sdk/;
../clock-node/main.mjs behaves the same on stdout.

- panel/open shows "draft saved N minutes ago", N counted from
  CLOCK_SAVED_AT (Unix milliseconds; the time a real plugin would keep in
  its data folder) to datetime.now();
- ui/event "save" picks a random file name with the random module, writes
  the draft there (in CLOCK_DIR, default the system's temporary folder, in
  a worker thread) and says "saved draft-xxxxxxxx.txt".
Every step logs a line on stderr; shutdown or stdin EOF ends it at once.
"""

import asyncio
import datetime
import os
import random
import string
import tempfile
import time

from agentty_sdk import Plugin

SAVED_AT = datetime.datetime.fromtimestamp(int(os.environ.get("CLOCK_SAVED_AT") or 0) / 1000 or time.time())
DIR = os.environ.get("CLOCK_DIR") or tempfile.gettempdir()


async def initialize(params, p):
    p.log("initialized " + str((params.get("plugin") or {}).get("id", "?")))


async def panel_open(params, p):
    minutes = int((datetime.datetime.now() - SAVED_AT).total_seconds() // 60)
    p.log("panel open, %d minutes since the save" % minutes)
    await p.request("ui/setPanel", {"tree": {"type": "column", "children": [
        {"type": "text", "text": "draft saved %d minutes ago" % minutes, "style": "muted"},
        {"type": "button", "id": "save", "label": "Save"},
    ]}})


async def ui_event(params, p):
    if params.get("element") != "save":
        return
    name = "draft-" + "".join(random.choices(string.ascii_lowercase + string.digits, k=8)) + ".txt"
    path = os.path.join(DIR, name)

    def write():
        with open(path, "w", encoding="utf-8") as f:
            f.write("draft\n")
        # Replays of a pinned session pick the same name: another run at
        # the same time may have removed it already.
        try:
            os.remove(path)
        except FileNotFoundError:
            pass

    await asyncio.to_thread(write)
    p.log("wrote " + name)
    p.notify("ui/notify", {"message": "saved " + name, "kind": "success"})


if __name__ == "__main__":
    asyncio.run(Plugin("clock-python", {
        "initialize": initialize,
        "panel/open": panel_open,
        "ui/event": ui_event,
    }).run())
