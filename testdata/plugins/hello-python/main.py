"""hello-python: a deterministic Agentty fixture plugin (API 1) for tapedeck tests.

Python 3 standard library only. It speaks JSON-RPC 2.0, one compact JSON object
per line, on stdin/stdout, and behaves byte-for-byte like ../hello-node/main.mjs
on stdout (stderr differs only in the "hello-python" prefix). Keep the two
files in step: same messages, same key order, same stderr lines. Where Python
and JavaScript differ (number parsing, String(), lone surrogates, UTF-8
decoding of the environment) this file follows the JavaScript behaviour.

Environment:
  FIXTURE_LABEL=text      replaces "Hello" in the panel title.
  FIXTURE_CRASH_AFTER=N   (N >= 1) exit with code 3 after handling N ui/event
                          notifications.
"""

import decimal
import json
import math
import os
import re
import sys

TAG = "hello-python"


class _Undefined:
    pass


UNDEFINED = _Undefined()


def _env(name):
    environb = getattr(os, "environb", None)
    if environb is not None:
        v = environb.get(name.encode())
        return None if v is None else v.decode("utf-8", "replace")
    return os.environ.get(name)


def _parse_count(s):
    if s is None or not re.fullmatch(r"[0-9]+", s):
        return 0
    return int(s)


_label = _env("FIXTURE_LABEL")
LABEL = _label if _label is not None else "Hello"
CRASH_AFTER = _parse_count(_env("FIXTURE_CRASH_AFTER"))

sys.stdout.reconfigure(encoding="utf-8", errors="strict", newline="\n")
sys.stderr.reconfigure(encoding="utf-8", errors="strict", newline="\n")

_SURROGATE = re.compile("[\ud800-\udfff]")

next_id = 1  # ids of the plugin's own requests: 1, 2, 3, ...
pending = {}  # request id -> method
clicks = 0
name = None  # last "name" input value (str) or None
ui_events = 0


class Finish(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


# ---- output ------------------------------------------------------------------


def write_line(text):
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away: nothing more can be said.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise Finish(0)


def log(text):
    # Like Node: a lone surrogate goes out as U+FFFD.
    try:
        sys.stderr.write(_SURROGATE.sub("\ufffd", TAG + ": " + text + "\n"))
        sys.stderr.flush()
    except BrokenPipeError:
        pass


def dumps(obj):
    # Like JSON.stringify: compact, keys in insertion order, lone surrogates
    # escaped as \udxxx.
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return _SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), text)


def notify(method, params):
    write_line(dumps({"jsonrpc": "2.0", "method": method, "params": params}))


def request(method, params):
    global next_id
    rid = next_id
    next_id += 1
    pending[rid] = method
    write_line(dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))


def respond(raw_id, result):
    # raw_id is the id exactly as the host wrote it (compacted JSON text).
    write_line('{"jsonrpc":"2.0","id":' + raw_id + ',"result":' + dumps(result) + "}")


def respond_error(raw_id, code, message):
    write_line('{"jsonrpc":"2.0","id":' + raw_id + ',"error":' + dumps({"code": code, "message": message}) + "}")


# ---- helpers shared in spirit with main.mjs ------------------------------------


def _reject_constant(s):
    raise ValueError("not JSON: " + s)


def parse_json(text):
    # Like JSON.parse: every number is a double, NaN/Infinity are not JSON.
    return json.loads(text, parse_int=float, parse_constant=_reject_constant)


def get(v, key):
    """Property of a parsed JSON value, or UNDEFINED when it is not an object."""
    if isinstance(v, dict):
        return v.get(key, UNDEFINED)
    return UNDEFINED


def js_number(x):
    """Number::toString of ECMAScript for a float."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    t = decimal.Decimal(repr(abs(x))).as_tuple()  # shortest round-trip digits
    digits = "".join(map(str, t.digits))
    exp = t.exponent
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = exp + k
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        es = ("+" if e >= 0 else "-") + str(abs(e))
        s = digits + "e" + es if k == 1 else digits[0] + "." + digits[1:] + "e" + es
    return sign + s


def js_string(v):
    """String(v) of JavaScript for a parsed JSON value."""
    if v is UNDEFINED:
        return "undefined"
    if v is None:
        return "null"
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return js_number(float(v))
    if isinstance(v, list):
        return ",".join("" if e is None else js_string(e) for e in v)
    return "[object Object]"


_WS = " \t\r\n"


def _skip_string(s, i):
    i += 1
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        else:
            i += 1
    return i


def _skip_value(s, i):
    c = s[i]
    if c == '"':
        return _skip_string(s, i)
    if c in "{[":
        depth = 0
        while i < len(s):
            d = s[i]
            if d == '"':
                i = _skip_string(s, i)
                continue
            if d in "{[":
                depth += 1
            elif d in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i
    while i < len(s) and s[i] not in ",}] \t\r\n":
        i += 1
    return i


def _skip_ws(s, i):
    while i < len(s) and s[i] in _WS:
        i += 1
    return i


def _compact(s):
    """Removes insignificant whitespace from a valid JSON text."""
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == '"':
            j = _skip_string(s, i)
            out.append(s[i:j])
            i = j
            continue
        if c not in _WS:
            out.append(c)
        i += 1
    return "".join(out)


def raw_member(s, key):
    """The raw (compacted) text of the last top-level member `key` of the JSON
    object text s, which has already been validated by parse_json."""
    found = None
    i = _skip_ws(s, 0) + 1  # past '{'
    while True:
        i = _skip_ws(s, i)
        if i >= len(s) or s[i] == "}":
            break
        k_end = _skip_string(s, i)
        k = json.loads(s[i:k_end])
        i = _skip_ws(s, k_end) + 1  # past ':'
        i = _skip_ws(s, i)
        v_end = _skip_value(s, i)
        if k == key:
            found = _compact(s[i:v_end])
        i = _skip_ws(s, v_end)
        if i < len(s) and s[i] == ",":
            i += 1
    return found


# ---- behaviour -------------------------------------------------------------------


def panel_tree():
    return {
        "type": "column",
        "gap": "medium",
        "children": [
            {"type": "text", "text": LABEL, "style": "title"},
            {"type": "text", "text": "clicked " + str(clicks) + " times", "style": "muted"},
            {"type": "input", "id": "name", "placeholder": "Your name"},
            {"type": "button", "id": "greet", "label": "Greet", "variant": "primary"},
            {"type": "button", "id": "ask", "label": "Ask the agent"},
            {
                "type": "list",
                "id": "items",
                "items": [
                    {"id": "a", "title": "Alpha", "tone": "info"},
                    {"id": "b", "title": "Beta", "subtitle": "second", "tone": "success",
                     "actions": [{"id": "rm", "label": "Remove"}]},
                ],
            },
            {"type": "badge", "text": "v1", "tone": "neutral"},
        ],
    }


def set_panel():
    request("ui/setPanel", {"tree": panel_tree()})


def handle_request(msg, line):
    raw_id = raw_member(line, "id")
    if msg["method"] == "initialize":
        respond(raw_id, {"sdkVersion": "fixture-1", "apiVersion": 1})
        log("initialized " + js_string(get(get(get(msg, "params"), "plugin"), "id")))
        return
    respond_error(raw_id, -32601, "unknown method " + msg["method"])


def handle_event(params):
    global clicks, name
    element = get(params, "element")
    event = get(params, "event")
    if element == "greet" and event == "click":
        clicks += 1
        set_panel()
        notify("ui/notify", {"message": "Hello, " + (name if name else "world") + "!", "kind": "success"})
    elif element == "name" and event == "change":
        value = get(params, "value")
        name = None if value is UNDEFINED or value is None else js_string(value)
    elif element == "ask" and event == "click":
        request("prompt/inject", {"text": "Say hello", "target": "ask"})
    elif element == "items" and event == "action":
        log("action " + js_string(get(params, "action")) + " on " + js_string(get(params, "item")))


def handle_notification(msg):
    global ui_events
    method = msg["method"]
    if method == "panel/open":
        set_panel()
    elif method == "ui/event":
        handle_event(get(msg, "params"))
        ui_events += 1
        if CRASH_AFTER > 0 and ui_events >= CRASH_AFTER:
            log("simulated crash after " + str(ui_events) + " ui/event messages")
            raise Finish(3)
    elif method == "context/changed":
        notify("ui/setBadge", {"text": "ctx"})
    elif method == "shutdown":
        log("bye")
        raise Finish(0)
    # unknown notifications are ignored


def handle_response(msg):
    rid = msg["id"]
    if isinstance(rid, bool) or not isinstance(rid, float) or rid not in pending:
        return
    method = pending.pop(rid)
    if method != "prompt/inject":
        return
    error = get(msg, "error")
    if error is not UNDEFINED and error is not None:
        notify("ui/notify", {"message": "prompt failed: " + js_string(get(error, "message")), "kind": "error"})
    else:
        notify("ui/notify", {"message": "prompt " + js_string(get(get(msg, "result"), "status")), "kind": "info"})


def handle_line(line):
    if line.endswith("\r"):
        line = line[:-1]
    if re.fullmatch(r"[ \t\r]*", line):
        return
    try:
        msg = parse_json(line)
    except (ValueError, RecursionError):
        log("ignoring non-JSON line")
        return
    if not isinstance(msg, dict):
        log("ignoring non-object message")
        return
    method = get(msg, "method")
    rid = get(msg, "id")
    has_id = rid is not UNDEFINED and rid is not None
    if isinstance(method, str):
        if has_id:
            handle_request(msg, line)
        else:
            handle_notification(msg)
    elif has_id:
        handle_response(msg)
    else:
        log("ignoring message without method or id")


def main():
    stdin = sys.stdin.buffer
    try:
        while True:
            raw = stdin.readline()  # splits on b"\n" only
            if not raw:
                break
            if raw.endswith(b"\n"):
                raw = raw[:-1]
            handle_line(raw.decode("utf-8", "replace"))
        log("bye")
        return 0
    except Finish as f:
        return f.code


if __name__ == "__main__":
    sys.exit(main())
