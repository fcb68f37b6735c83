"""tapedeck's pinned clock for Python plugins, found on PYTHONPATH as
sitecustomize by `tapedeck record --pin-clock` and by replays of a tape
recorded so. The wall clock (time.time, time.time_ns, time.localtime,
time.gmtime, time.ctime, time.strftime, time.asctime, datetime.now,
datetime.utcnow, datetime.today, date.today) reads the recorded time of
the last line the host gave the plugin: tapedeck writes it into the file
TAPEDECK_CLOCK_NOW_FILE names before it writes the line, when recording
and when replaying alike. While the plugin works on a line the clock
stands still; only a plugin that keeps reading it (each read within half a
second of the last) for more than a second sees it move on, at real speed;
it never goes back. The random module and
os.urandom (so uuid.uuid4) are seeded from the session unless
TAPEDECK_CLOCK_SEED is unset. Monotonic clocks and sleeps are left
alone. A sitecustomize of the user's found later on the path is run
first, so both apply.

Loading, it says so (a line in the file "loaded" beside the now file), so
that tapedeck can tell a pin that held from one a launcher dropped; and
unless TAPEDECK_CLOCK_CHILDREN is 1 it takes itself out of the environment
the plugin's own children get (PYTHONPATH and NODE_OPTIONS as the user had
them, no TAPEDECK_CLOCK_* left), so that only the plugin's own process is
pinned.
"""


def _chain():
    # Python imports one sitecustomize: this one. Run the next one on the
    # path, if any, as the user's own setup.
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)


def _pin():
    import os

    env = os.environ
    try:
        origin_ns = int(env["TAPEDECK_CLOCK_ORIGIN_MS"]) * 1000000
    except (KeyError, ValueError):
        return
    now_file = env.get("TAPEDECK_CLOCK_NOW_FILE", "")
    seed = env.get("TAPEDECK_CLOCK_SEED", "")
    if now_file:
        try:
            with open(os.path.join(os.path.dirname(now_file), "loaded"), "a") as f:
                f.write("python %d\n" % os.getpid())
        except OSError:
            pass
    if env.get("TAPEDECK_CLOCK_CHILDREN") != "1":
        for name, saved in (("PYTHONPATH", "TAPEDECK_CLOCK_PYTHONPATH"), ("NODE_OPTIONS", "TAPEDECK_CLOCK_NODE_OPTIONS")):
            if saved in env:
                env[name] = env[saved]
            else:
                env.pop(name, None)
        for k in [k for k in env if k.startswith("TAPEDECK_CLOCK_")]:
            del env[k]
    import datetime as _dt
    import time

    monotonic_ns = time.monotonic_ns
    m0 = monotonic_ns()
    localtime, gmtime, strftime = time.localtime, time.gmtime, time.strftime

    # The now file: "NS NS\n", 20 digits each, the recorded time of the
    # last line the host gave the plugin; the two differ only while a write
    # is half done.
    fd = -1
    try:
        fd = os.open(now_file, os.O_RDONLY)
    except OSError:
        pass
    # The clock stands still at the published time while the plugin works;
    # only reads that keep coming (each within gap of the one before) for
    # more than grace move it on, at real speed, so that a loop waiting for
    # the clock ends. It never goes back.
    grace_ns, gap_ns = 1000000000, 500000000
    state = {"published": origin_ns, "run": m0, "read": None, "last": 0}

    def read_published():
        for _ in range(5):
            try:
                b = os.pread(fd, 41, 0)
            except OSError:
                break
            if len(b) == 41 and b[:20] == b[21:41]:
                try:
                    return int(b[:20])
                except ValueError:
                    pass
        return state["published"]

    def time_ns():
        m = monotonic_ns()
        if fd < 0:
            return origin_ns + (m - m0)
        p = read_published()
        if p != state["published"] or state["read"] is None or m - state["read"] > gap_ns:
            state["run"] = m
        state["published"], state["read"] = p, m
        run = m - state["run"]
        state["last"] = max(state["last"], p + (run - grace_ns if run > grace_ns else 0))
        return state["last"]

    def now():
        return time_ns() / 1e9

    time.time = now
    time.time_ns = time_ns
    time.localtime = lambda secs=None: localtime(now() if secs is None else secs)
    time.gmtime = lambda secs=None: gmtime(now() if secs is None else secs)
    time.ctime = lambda secs=None: time.asctime(localtime(now() if secs is None else secs))
    _asctime = time.asctime
    time.asctime = lambda t=None: _asctime(localtime(now()) if t is None else t)
    time.strftime = lambda fmt, t=None: strftime(fmt, localtime(now()) if t is None else t)

    real_datetime, real_date = _dt.datetime, _dt.date

    def stamp(cls, tz=None):
        ns = time_ns()
        d = cls.fromtimestamp(ns // 1000000000, tz)
        return d.replace(microsecond=(ns // 1000) % 1000000)

    class datetime(real_datetime):
        @classmethod
        def now(cls, tz=None):
            return stamp(cls, tz)

        @classmethod
        def utcnow(cls):
            return stamp(cls, _dt.timezone.utc).replace(tzinfo=None)

        @classmethod
        def today(cls):
            return stamp(cls)

    class date(real_date):
        @classmethod
        def today(cls):
            return cls.fromtimestamp(now())

    datetime.__name__ = datetime.__qualname__ = "datetime"
    date.__name__ = date.__qualname__ = "date"
    datetime.__module__ = date.__module__ = "datetime"
    _dt.datetime, _dt.date = datetime, date

    if not seed.isdigit():
        return  # the clock only: random numbers stay random
    import random

    random.seed(int(seed))
    # Random bytes come from a generator of their own, so that random
    # draws the same numbers whether or not the plugin asks for bytes;
    # uuid.uuid4 takes its bytes from os.urandom.
    byte_source = random.Random(int(seed) ^ 0x5BD1E995)

    def urandom(n):
        n = int(n)
        if n < 0:
            raise ValueError("negative argument not allowed")
        return byte_source.getrandbits(n * 8).to_bytes(n, "little") if n else b""

    os.urandom = urandom


try:
    _chain()
finally:
    _pin()
