"""stamp-python: an Agentty fixture plugin (API 1) for tapedeck's
pinned-clock tests, whose output depends on the wall clock to the
millisecond, on os.urandom / uuid.uuid4 and on the state it keeps. Python 3
standard library only, its SDK vendored in agentty_sdk/;
../stamp-node/main.mjs says the same on stdout.

- STAMP_SLOW_START_MS=N makes it start N ms slower (it blocks before it
  reads stdin);
- panel/open shows "opened at HH:MM:SS" (local time, so TZ matters),
  "created_at" with milliseconds (UTC) and an id from uuid.uuid4;
- ui/event "save" creates note-<uuid4>-<urandom>.txt in STAMP_HOME (default
  the system's temporary folder) and fails with EEXIST when that file is
  there already: a plugin that keeps state. It says "saved NAME at
  CREATED_AT" or "could not save NAME: CODE".
Every step logs a line on stderr; shutdown or stdin EOF ends it at once.
"""

import asyncio
import datetime
import errno
import os
import sys
import tempfile
import time
import uuid

# The SDK is clock-python's (../clock-python/agentty_sdk), not a copy.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clock-python"))
from agentty_sdk import Plugin  # noqa: E402

SLOW = int(os.environ.get("STAMP_SLOW_START_MS") or 0)
if SLOW > 0:
    time.sleep(SLOW / 1000)
HOME = os.environ.get("STAMP_HOME") or tempfile.gettempdir()


def iso(d):
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (d.microsecond // 1000)


async def initialize(params, p):
    p.log("initialized " + str((params.get("plugin") or {}).get("id", "?")))


async def panel_open(params, p):
    now = datetime.datetime.now(datetime.timezone.utc)
    local = now.astimezone()
    p.log("panel open")
    await p.request("ui/setPanel", {"tree": {"type": "column", "children": [
        {"type": "text", "text": "opened at " + local.strftime("%H:%M:%S")},
        {"type": "text", "text": "created_at " + iso(now)},
        {"type": "text", "text": "id " + str(uuid.uuid4())},
        {"type": "button", "id": "save", "label": "Save"},
    ]}})


async def ui_event(params, p):
    if params.get("element") != "save":
        return
    name = "note-" + str(uuid.uuid4()) + "-" + os.urandom(4).hex() + ".txt"
    try:
        with open(os.path.join(HOME, name), "x", encoding="utf-8") as f:
            f.write("note\n")
    except OSError as e:
        code = errno.errorcode.get(e.errno, str(e.errno))
        p.log("could not write %s: %s" % (name, code))
        p.notify("ui/notify", {"message": "could not save %s: %s" % (name, code), "kind": "error"})
        return
    p.log("wrote " + name)
    p.notify("ui/notify", {"message": "saved %s at %s" % (name, iso(datetime.datetime.now(datetime.timezone.utc))), "kind": "success"})


if __name__ == "__main__":
    asyncio.run(Plugin("stamp-python", {
        "initialize": initialize,
        "panel/open": panel_open,
        "ui/event": ui_event,
    }).run())
