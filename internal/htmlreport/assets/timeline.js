// tapedeck's timeline, shared by the HTML report and the playground: the
// frames as two lanes, rendering only the rows in view; append adds a
// frame as it happens (the playground's live timeline).

  var ROW = 26; // the height of one timeline row, in pixels (see .row in the CSS)
  var OVERSCAN = 300; // pixels drawn above and below the visible part

  // ---------- the timeline ----------

  // Timeline draws frames as two lanes (host | plugin, stderr in the plugin
  // lane, lifecycle events across both), rendering only the rows in view.
  function Timeline(frames, opts) {
    this.f = frames;
    this.o = opts;
    this.rows = new Int32Array(0);
    this.pos = new Int32Array(frames.length);
    this.open = new Map(); // frame index → {node, h}
    this.sorted = [];
    this.sel = -1;
    this.lc = null;
    this.sums = new Map();
    this.index();
    this.build();
    this.filter();
  }

  // index notes, for each frame, the ui/setPanel whose panel was up then
  // (one the host refused left the old panel in place).
  Timeline.prototype.index = function () {
    var frames = this.f;
    this.panelAt = new Int32Array(frames.length);
    var cur = -1;
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      if (isSetPanel(f) && !(f.p && frames[f.p - 1] && frames[f.p - 1].k === 'error')) cur = i;
      this.panelAt[i] = cur;
    }
  };

  // append adds the session's next frame as it happens: a response names
  // its request (f.p), and the request is given its answer. The view stays
  // at the end when it was there.
  Timeline.prototype.append = function (f) {
    var i = this.f.length;
    this.f.push(f);
    if ((f.k === 'response' || f.k === 'error') && f.p > 0 && this.f[f.p - 1]) {
      var req = this.f[f.p - 1];
      req.p = i + 1;
      req.l = f.l;
      this.sums.delete(f.p - 1);
      if (this.open.has(f.p - 1)) this.open.set(f.p - 1, { node: this.detail(f.p - 1), h: 0 });
    }
    var atEnd = this.follow !== false;
    this.pos = new Int32Array(this.f.length);
    this.index();
    this.filter(true);
    this.render();
    if (atEnd) {
      this.scroller.scrollTop = this.scroller.scrollHeight;
      this.render();
    }
    if (this.sel < 0) this.moment(this.f.length - 1, 'Panel at the end');
  };

  Timeline.prototype.build = function () {
    var self = this;
    var root = el('div', 'timeline-view');
    var bar = el('div', 'toolbar');
    this.dirs = {};
    var dirs = el('span', 'f-dirs');
    ['in', 'out', 'err', 'ev'].forEach(function (d) {
      var cb = el('input', 'f-dir');
      cb.type = 'checkbox';
      cb.checked = true;
      cb.value = d;
      cb.addEventListener('change', function () { self.filter(); });
      self.dirs[d] = cb;
      add(dirs, add(el('label', 'chip dir-' + d), cb, ' ' + FILTER_LABEL[d]));
    });
    this.kind = el('select', 'f-kind');
    ['', 'request', 'notification', 'response', 'error', 'stray', 'blank', 'stderr', 'event'].forEach(function (k) {
      var o = el('option', '', k || 'every kind');
      o.value = k;
      self.kind.appendChild(o);
    });
    this.kind.addEventListener('change', function () { self.filter(); });
    this.method = el('input', 'f-method');
    this.method.type = 'text';
    this.method.placeholder = 'method (ui/setPanel, ui/*)';
    this.method.addEventListener('input', function () { self.filter(); });
    this.search = el('input', 'f-search');
    this.search.type = 'search';
    this.search.placeholder = 'search text';
    this.search.addEventListener('input', function () { self.filter(); });
    add(bar, dirs, this.kind, this.method, this.search);
    if (this.o.findings && (this.o.findings.size || this.o.live)) {
      this.onlyFindings = el('input', 'f-findings');
      this.onlyFindings.type = 'checkbox';
      this.onlyFindings.addEventListener('change', function () { self.filter(); });
      add(bar, add(el('label', 'chip'), this.onlyFindings, ' with findings'));
    }
    this.count = el('span', 'f-count');
    add(bar, this.count);

    var split = el('div', 'split');
    var list = el('div', 'timeline');
    var head = el('div', 'lanes-head');
    add(head, el('span', 'c-seq', 'seq'), el('span', 'c-time', 'time'), el('span', 'lane', 'host'), el('span', 'lane', (this.o.peerLane || 'plugin') + (this.o.laneNote || '')));
    this.scroller = el('div', 'scroller');
    this.scroller.tabIndex = 0;
    this.sizer = el('div', 'sizer');
    this.scroller.appendChild(this.sizer);
    this.scroller.addEventListener('scroll', function () {
      // A live timeline follows the end until the person scrolls up.
      self.follow = self.scroller.scrollTop + self.scroller.clientHeight >= self.scroller.scrollHeight - 2 * ROW;
      self.schedule();
    });
    add(list, head, this.scroller);
    this.aside = el('aside', 'moment');
    this.moment(this.f.length - 1, 'Panel at the end');
    add(this.aside, el('p', 'muted', 'Pick a frame to see the panel as it was at that moment.'));
    add(split, list, this.aside);
    add(root, bar, split);
    this.el = root;
    window.addEventListener('resize', function () { self.schedule(); });
  };

  Timeline.prototype.lower = function (i) {
    if (!this.lc) this.lc = new Array(this.f.length);
    var s = this.lc[i];
    if (s === undefined) {
      var f = this.f[i];
      s = ((f.r || '') + '\n' + (f.m || '') + '\n' + (f.e || '') + '\n' + (f.x || '')).toLowerCase();
      this.lc[i] = s;
    }
    return s;
  };

  Timeline.prototype.filter = function (keepScroll) {
    var dirs = {};
    for (var d in this.dirs) dirs[d] = this.dirs[d].checked;
    var kind = this.kind.value;
    var mm = methodMatcher(this.method.value.trim());
    var q = this.search.value.toLowerCase();
    var onlyF = this.onlyFindings && this.onlyFindings.checked;
    var rows = new Int32Array(this.f.length);
    var n = 0;
    this.pos.fill(-1);
    for (var i = 0; i < this.f.length; i++) {
      var f = this.f[i];
      if (!dirs[f.d]) continue;
      if (kind && f.k !== kind) continue;
      if (mm && !(f.m && mm(f.m))) continue;
      if (onlyF && !this.o.findings.has(i)) continue;
      if (q && this.lower(i).indexOf(q) < 0) continue;
      this.pos[i] = n;
      rows[n++] = i;
    }
    this.rows = rows.subarray(0, n);
    this.count.textContent = n === this.f.length ? n + ' frames' : n + ' of ' + this.f.length + ' frames';
    this.resort();
    if (keepScroll === true) return;
    this.scroller.scrollTop = this.sel >= 0 && this.pos[this.sel] >= 0 ? Math.max(this.offsetOf(this.pos[this.sel]) - 60, 0) : 0;
    this.render();
  };

  Timeline.prototype.resetFilters = function () {
    for (var d in this.dirs) this.dirs[d].checked = true;
    this.kind.value = '';
    this.method.value = '';
    this.search.value = '';
    if (this.onlyFindings) this.onlyFindings.checked = false;
  };

  // resort lists the open rows that pass the filter, by position.
  Timeline.prototype.resort = function () {
    var self = this;
    this.sorted = [];
    this.open.forEach(function (o, i) {
      if (self.pos[i] >= 0) self.sorted.push([self.pos[i], o]);
    });
    this.sorted.sort(function (a, b) { return a[0] - b[0]; });
  };

  Timeline.prototype.offsetOf = function (p) {
    var y = p * ROW;
    for (var k = 0; k < this.sorted.length && this.sorted[k][0] < p; k++) y += this.sorted[k][1].h;
    return y;
  };

  Timeline.prototype.posAt = function (y) {
    var extra = 0;
    for (var k = 0; k < this.sorted.length; k++) {
      var p = this.sorted[k][0];
      var top = p * ROW + extra;
      if (y < top) break;
      if (y < top + ROW + this.sorted[k][1].h) return p;
      extra += this.sorted[k][1].h;
    }
    return Math.max(0, Math.floor((y - extra) / ROW));
  };

  Timeline.prototype.schedule = function () {
    var self = this;
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(function () {
      self.pending = false;
      self.render();
    });
  };

  Timeline.prototype.render = function (again) {
    var total = this.rows.length * ROW;
    for (var k = 0; k < this.sorted.length; k++) total += this.sorted[k][1].h;
    this.sizer.style.height = total + 'px';
    var top = this.scroller.scrollTop;
    var height = this.scroller.clientHeight || 800;
    var p = this.posAt(Math.max(0, top - OVERSCAN));
    var y = this.offsetOf(p);
    var frag = document.createDocumentFragment();
    var drawn = [];
    while (p < this.rows.length && y < top + height + OVERSCAN) {
      var i = this.rows[p];
      var node = this.rowNode(i);
      node.style.top = y + 'px';
      frag.appendChild(node);
      var o = this.open.get(i);
      if (o) drawn.push(o);
      y += ROW + (o ? o.h : 0);
      p++;
    }
    this.sizer.replaceChildren(frag);
    // Open rows are as tall as their detail: measure, and draw again once.
    var changed = false;
    drawn.forEach(function (o) {
      var h = o.node.offsetHeight;
      if (h && h !== o.h) {
        o.h = h;
        changed = true;
      }
    });
    if (changed && !again) this.render(true);
  };

  Timeline.prototype.summaryOf = function (i) {
    var s = this.sums.get(i);
    if (s === undefined) {
      s = summary(this.f[i]);
      this.sums.set(i, s);
    }
    return s;
  };

  Timeline.prototype.rowNode = function (i) {
    var self = this;
    var f = this.f[i];
    var row = el('div', 'row dir-' + f.d + ' kind-' + f.k);
    row.dataset.seq = String(f.s);
    row.dataset.index = String(i);
    row.dataset.kind = f.k;
    row.dataset.method = f.m || '';
    if (i === this.sel) row.classList.add('selected');
    if (this.sel >= 0 && this.f[this.sel].p === i + 1) row.classList.add('partner');
    var line = el('div', 'line');
    add(line, el('span', 'c-seq', f.s), el('span', 'c-time', fmtAt(f.t)));
    var card = el('div', 'fcard');
    add(card, el('span', 'arrow', ARROW[f.d]));
    if (f.k === 'event') {
      add(card, el('span', 'kind', 'event'), el('span', 'sum', f.e));
    } else {
      add(card, el('span', 'kind', f.k));
      if (f.m) add(card, el('span', 'method', f.m));
      if (f.i) add(card, el('span', 'id', '#' + cut(f.i, 24)));
      if (f.p) {
        var other = this.f[f.p - 1];
        if (f.k === 'request') add(card, linkButton('→ ' + other.s, function () { self.jump(f.p - 1); }, 'answered by frame ' + other.s));
        else add(card, linkButton('↩ ' + fmtLatency(f.l) + ' · ' + other.s, function () { self.jump(f.p - 1); }, 'answers frame ' + other.s + ' after ' + fmtLatency(f.l)));
      } else if (f.k === 'request') {
        add(card, el('span', 'unanswered', 'no answer'));
      }
      add(card, el('span', 'sum', this.summaryOf(i)));
      if (f.n) add(card, el('span', 'flag', 'no newline'));
      if (f.c) add(card, el('span', 'flag', 'cut'));
      if (f.b) add(card, el('span', 'flag', 'not UTF-8'));
    }
    var fs = this.o.findings && this.o.findings.get(i);
    if (fs) {
      var worst = fs.some(function (x) { return x.level === 'error'; }) ? 'error' : (fs.some(function (x) { return x.level === 'warning'; }) ? 'warning' : 'info');
      var mark = el('span', 'finding-mark level-' + worst, '⚑ ' + fs.length);
      mark.title = fs.map(function (x) { return x.level + ' ' + x.rule + ': ' + x.message; }).join('\n');
      add(card, mark);
      row.classList.add('has-finding');
    }
    var lane;
    if (f.d === 'ev') lane = el('div', 'lane lane-across');
    else {
      var host = el('div', 'lane lane-host');
      var plugin = el('div', 'lane lane-plugin');
      add(line, host, plugin);
      lane = f.d === 'in' ? host : plugin;
    }
    add(lane, card);
    if (f.d === 'ev') add(line, lane);
    row.appendChild(line);
    line.addEventListener('click', function () { self.toggle(i); });
    var o = this.open.get(i);
    if (o) {
      row.classList.add('open');
      row.appendChild(o.node);
    }
    return row;
  };

  Timeline.prototype.detail = function (i) {
    var self = this;
    var f = this.f[i];
    var d = el('div', 'detail');
    var facts = ['seq ' + f.s, fmtAt(f.t), DIR_LABEL[f.d]];
    if (f.k !== DIR_LABEL[f.d]) facts.push(f.k);
    if (f.k !== 'event') facts.push((f.r || '').length + ' characters');
    if (f.n) facts.push('no newline at the end');
    if (f.c) facts.push('stored cut: the line had ' + f.c + ' bytes');
    if (f.b) facts.push('not valid UTF-8: invalid bytes shown as \\xNN');
    if (f.x) facts.push(f.x);
    add(d, el('div', 'detail-head', facts.join(' · ')));
    if (f.p) {
      var other = this.f[f.p - 1];
      var links = el('div', 'detail-links');
      if (f.k === 'request') add(links, 'answered by ', linkButton('frame ' + other.s, function () { self.jump(f.p - 1); }), ' after ' + fmtLatency(other.l));
      else add(links, 'answers ', linkButton('frame ' + other.s + ' (' + (other.m || '') + ')', function () { self.jump(f.p - 1); }), ' after ' + fmtLatency(f.l));
      add(d, links);
    }
    var fs = this.o.findings && this.o.findings.get(i);
    if (fs) fs.forEach(function (x) { add(d, findingLine(x)); });
    add(d, el('pre', 'json', prettyOf(f)));
    return d;
  };

  Timeline.prototype.toggle = function (i) {
    if (this.open.has(i) && this.sel === i) this.open.delete(i);
    else if (!this.open.has(i)) this.open.set(i, { node: this.detail(i), h: 0 });
    this.select(i);
    this.resort();
    this.render();
  };

  Timeline.prototype.select = function (i) {
    this.sel = i;
    this.moment(i, 'Panel at frame ' + this.f[i].s);
  };

  // moment shows in the side pane the panel as it was at frame i.
  Timeline.prototype.moment = function (i, title) {
    var a = this.aside;
    a.replaceChildren();
    add(a, el('h3', '', title));
    var j = i < 0 ? -1 : this.panelAt[i];
    if (j < 0) {
      add(a, el('p', 'muted', 'No panel had been set yet.'));
      return;
    }
    var self = this;
    var src = this.f[j];
    add(a, add(el('p', 'muted'), 'set by ', linkButton('frame ' + src.s, function () { self.jump(j); }), ' at ' + fmtAt(src.t)));
    a.appendChild(drawPanel(treeOf(src)));
    // The badge and the last toast as they were then.
    var badge = null, toast = -1;
    for (var k = i; k >= 0 && (badge === null || toast < 0); k--) {
      var g = this.f[k];
      if (badge === null && isCall(g, 'ui/setBadge')) badge = k;
      if (toast < 0 && isCall(g, 'ui/notify')) toast = k;
    }
    if (badge !== null) {
      var bm = parseLine(this.f[badge]);
      add(a, add(el('p', 'muted moment-badge'), 'badge ', drawBadge(bm && bm.params ? bm.params.text : '')));
    }
    if (toast >= 0) {
      var tm = parseLine(this.f[toast]);
      var fs = this.o.findings && this.o.findings.get(toast);
      var dropped = !!(fs && fs.some(function (x) { return x.rule === 'notify-dropped'; }));
      add(a, add(el('div', 'moment-toast'), el('p', 'muted', 'last toast, frame ' + this.f[toast].s), drawToast(tm && tm.params, dropped)));
    }
  };

  // jump shows frame i: filters cleared when they hide it, opened, selected
  // and scrolled into view.
  Timeline.prototype.jump = function (i) {
    if (this.o.show) this.o.show();
    if (this.pos[i] < 0) {
      this.resetFilters();
      this.filter();
    }
    if (!this.open.has(i)) this.open.set(i, { node: this.detail(i), h: 0 });
    this.select(i);
    this.resort();
    this.scroller.scrollTop = Math.max(this.offsetOf(this.pos[i]) - 60, 0);
    this.render();
  };

  function findingLine(x) {
    var d = el('div', 'finding level-' + (['error', 'warning', 'info'].indexOf(x.level) >= 0 ? x.level : 'info'));
    add(d, el('span', 'level', x.level), el('span', 'rule', x.rule), el('span', 'message', x.message));
    if (x.path) add(d, el('span', 'path', x.path));
    return d;
  }

