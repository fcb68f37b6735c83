// tapedeck's pinned clock for Node plugins, loaded with NODE_OPTIONS
// --require by `tapedeck record --pin-clock` and by replays of a tape
// recorded so. The wall clock reads the session's recorded start plus the
// real time elapsed since this process started, and Math.random is seeded
// from the session: a plugin says "10 minutes ago" and picks the same
// random names in the recording and in every replay. Monotonic clocks
// (performance.now, process.hrtime) and timers are left alone.
"use strict";
(function pin() {
  const origin = Number(process.env.TAPEDECK_CLOCK_ORIGIN_MS);
  const seed = Number(process.env.TAPEDECK_CLOCK_SEED);
  if (!Number.isFinite(origin) || !Number.isInteger(seed)) return;
  const { performance } = require("node:perf_hooks");
  const t0 = performance.now();
  const now = () => Math.floor(origin + (performance.now() - t0));

  const RealDate = globalThis.Date;
  function PinnedDate(...args) {
    if (!new.target) return new RealDate(now()).toString();
    return Reflect.construct(RealDate, args.length === 0 ? [now()] : args, new.target);
  }
  PinnedDate.prototype = RealDate.prototype;
  PinnedDate.now = now;
  PinnedDate.parse = RealDate.parse;
  PinnedDate.UTC = RealDate.UTC;
  Object.defineProperty(PinnedDate, "name", { value: "Date" });
  Object.defineProperty(PinnedDate, "length", { value: 7 });
  Object.defineProperty(RealDate.prototype, "constructor", { value: PinnedDate, writable: true, configurable: true });
  globalThis.Date = PinnedDate;

  // sfc32, seeded from the session's seed: a small, well-mixed generator.
  let a = 0x9e3779b9, b = 0x243f6a88, c = 0xb7e15162, d = seed >>> 0;
  const next = () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 15; i++) next();
  Math.random = next;
})();
