"""tapedeck's pinned clock for Python plugins, found on PYTHONPATH as
sitecustomize by `tapedeck record --pin-clock` and by replays of a tape
recorded so. The wall clock (time.time, time.time_ns, time.localtime,
time.gmtime, time.ctime, time.strftime, time.asctime, datetime.now,
datetime.utcnow, datetime.today, date.today) reads the session's recorded
start plus the real time elapsed since this process started, and the
random module is seeded from the session. Monotonic clocks and sleeps are
left alone. A sitecustomize of the user's found later on the path is run
first, so both apply.
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

    try:
        origin_ns = int(os.environ["TAPEDECK_CLOCK_ORIGIN_MS"]) * 1000000
        seed = int(os.environ["TAPEDECK_CLOCK_SEED"])
    except (KeyError, ValueError):
        return
    import datetime as _dt
    import random
    import time

    monotonic_ns = time.monotonic_ns
    m0 = monotonic_ns()
    localtime, gmtime, strftime = time.localtime, time.gmtime, time.strftime

    def time_ns():
        return origin_ns + (monotonic_ns() - m0)

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

    class datetime(real_datetime):
        @classmethod
        def now(cls, tz=None):
            return cls.fromtimestamp(now(), tz)

        @classmethod
        def utcnow(cls):
            return cls.fromtimestamp(now(), _dt.timezone.utc).replace(tzinfo=None)

        @classmethod
        def today(cls):
            return cls.fromtimestamp(now())

    class date(real_date):
        @classmethod
        def today(cls):
            return cls.fromtimestamp(now())

    datetime.__name__ = datetime.__qualname__ = "datetime"
    date.__name__ = date.__qualname__ = "date"
    datetime.__module__ = date.__module__ = "datetime"
    _dt.datetime, _dt.date = datetime, date
    random.seed(seed)


try:
    _chain()
finally:
    _pin()
