// tapedeck's pinned clock for Node plugins, loaded with NODE_OPTIONS
// --require by `tapedeck record --pin-clock` and by replays of a tape
// recorded so. The wall clock (Date.now(), new Date()) reads the recorded
// time of the last line the host gave the plugin: tapedeck writes it into
// the file TAPEDECK_CLOCK_NOW_FILE names before it writes the line, when
// recording and when replaying alike, so the clock advances with the
// recording's own time from frame to frame, however slow this run is.
// While the plugin works on a line the clock stands still; only a plugin
// that keeps reading it (each read within half a second of the last) for
// more than a second sees it move on, at real speed (so that a loop or a
// debounce waiting for the clock ends); it never goes back.
// Math.random, crypto.randomUUID, crypto.getRandomValues and
// crypto.randomBytes are seeded from the session unless
// TAPEDECK_CLOCK_SEED is unset. Monotonic clocks (performance.now,
// process.hrtime) and timers are left alone.
//
// Loading, it says so (a line in the file "loaded" beside the now file),
// so that tapedeck can tell a pin that held from one a launcher dropped;
// and unless TAPEDECK_CLOCK_CHILDREN is 1 it takes itself out of the
// environment the plugin's own children get (NODE_OPTIONS and PYTHONPATH
// as the user had them, no TAPEDECK_CLOCK_* left), so that only the
// plugin's own process is pinned.
"use strict";
(function pin() {
  const env = process.env;
  const origin = Number(env.TAPEDECK_CLOCK_ORIGIN_MS);
  if (!Number.isFinite(origin)) return;
  const fs = require("node:fs");
  const nowFile = env.TAPEDECK_CLOCK_NOW_FILE;
  const seedText = env.TAPEDECK_CLOCK_SEED;
  if (nowFile) {
    try {
      fs.appendFileSync(require("node:path").join(require("node:path").dirname(nowFile), "loaded"), "node " + process.pid + "\n");
    } catch {}
  }
  if (env.TAPEDECK_CLOCK_CHILDREN !== "1") {
    const restore = (name, saved) => {
      if (saved in env) env[name] = env[saved];
      else delete env[name];
    };
    restore("NODE_OPTIONS", "TAPEDECK_CLOCK_NODE_OPTIONS");
    restore("PYTHONPATH", "TAPEDECK_CLOCK_PYTHONPATH");
    for (const k of Object.keys(env)) if (k.startsWith("TAPEDECK_CLOCK_")) delete env[k];
  }
  const { performance } = require("node:perf_hooks");
  const t0 = performance.now();

  // The now file: "NS NS\n", 20 digits each; the two differ only while a
  // write is half done.
  let fd = -1;
  try {
    if (nowFile) fd = fs.openSync(nowFile, "r");
  } catch {}
  const buf = Buffer.alloc(41);
  let published = origin;
  const readPublished = () => {
    for (let i = 0; i < 5; i++) {
      let n;
      try {
        n = fs.readSync(fd, buf, 0, 41, 0);
      } catch {
        return published;
      }
      if (n < 41) continue;
      const a = buf.toString("latin1", 0, 20);
      if (a === buf.toString("latin1", 21, 41)) return Number(a.slice(0, 14));
    }
    return published;
  };
  // The clock stands still at the published time while the plugin works;
  // only reads that keep coming (each within gap of the one before) for
  // more than grace move it on, at real speed, so that a loop or a
  // debounce that waits for the clock ends. It never goes back.
  const grace = 1000, gap = 500;
  let runStart = t0, lastRead = -Infinity, last = -Infinity;
  const now = () => {
    const t = performance.now();
    if (fd < 0) return Math.floor(origin + (t - t0));
    const p = readPublished();
    if (p !== published || t - lastRead > gap) runStart = t;
    published = p;
    lastRead = t;
    const run = t - runStart;
    last = Math.max(last, run > grace ? Math.floor(published + run - grace) : published);
    return last;
  };

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

  if (!/^[0-9]+$/.test(seedText ?? "")) return;
  const seed = Number(seedText);

  // sfc32, seeded from the session's seed: a small, well-mixed generator.
  const sfc32 = (d) => {
    let a = 0x9e3779b9, b = 0x243f6a88, c = 0xb7e15162;
    const next = () => {
      a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
      let t = (a + b) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      d = (d + 1) | 0;
      t = (t + d) | 0;
      c = (c + t) | 0;
      return t >>> 0;
    };
    for (let i = 0; i < 15; i++) next();
    return next;
  };
  const random = sfc32(seed >>> 0);
  Math.random = () => random() / 4294967296;

  // Random bytes come from a stream of their own, so that Math.random
  // draws the same numbers whether or not the plugin asks for bytes.
  const word = sfc32((seed ^ 0x5bd1e995) >>> 0);
  const fill = (view) => {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    for (let i = 0; i < bytes.length; i += 4) {
      const w = word();
      for (let j = 0; j < 4 && i + j < bytes.length; j++) bytes[i + j] = (w >>> (8 * j)) & 0xff;
    }
    return view;
  };
  const uuid = () => {
    const b = fill(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Buffer.from(b).toString("hex");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  const getRandomValues = (view) => {
    if (!ArrayBuffer.isView(view) || view instanceof Float32Array || view instanceof Float64Array || view instanceof DataView) {
      throw new TypeError("The data argument must be an integer-type TypedArray");
    }
    if (view.byteLength > 65536) throw new RangeError("The ArrayBufferView's byte length exceeds 65536");
    return fill(view);
  };
  const crypto = require("node:crypto");
  const randomBytes = (size, cb) => {
    const b = fill(Buffer.alloc(size));
    if (typeof cb === "function") {
      process.nextTick(cb, null, b);
      return undefined;
    }
    return b;
  };
  const define = (obj, name, value) => {
    try {
      Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: true });
    } catch {}
  };
  define(crypto, "randomUUID", uuid);
  define(crypto, "getRandomValues", getRandomValues);
  define(crypto, "randomBytes", randomBytes);
  define(crypto, "pseudoRandomBytes", randomBytes);
  const web = globalThis.crypto ?? crypto.webcrypto;
  if (web) {
    define(web, "randomUUID", uuid);
    define(web, "getRandomValues", getRandomValues);
  }
  // import { randomUUID } from "node:crypto" reads the pinned ones too.
  try {
    require("node:module").syncBuiltinESMExports();
  } catch {}
})();
