// tapedeck's report page. It reads the JSON in #data and draws everything
// with the shared panel renderer and timeline (panel.js, timeline.js).

  var PAGE = 24; // panels drawn at once in the panels view

  var D = JSON.parse(document.getElementById('data').textContent);
  var app = document.getElementById('app');

  // A response names the request it answers (p); the data, written in one
  // pass, cannot name a request's answer, which came later: the page gives
  // each request its answer before anything is drawn.
  function pairAnswers(frames) {
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      if ((f.k === 'response' || f.k === 'error') && f.p > 0 && frames[f.p - 1]) frames[f.p - 1].p = i + 1;
    }
  }
  pairAnswers(D.frames);
  if (D.replay) pairAnswers(D.replay.live);

  // ---------- the page ----------

  var views = [];

  function tabs(nav, main) {
    return function (name, label, build) {
      var b = el('button', 'tab', label);
      b.type = 'button';
      b.dataset.view = name;
      var v = el('section', 'view view-' + name);
      v.id = 'view-' + name;
      v.hidden = views.length > 0;
      var entry = { name: name, button: b, view: v, built: false, build: build, onShow: null };
      if (!v.hidden) b.classList.add('active');
      views.push(entry);
      b.addEventListener('click', function () { show(name); });
      nav.appendChild(b);
      main.appendChild(v);
      return entry;
    };
  }

  function show(name) {
    views.forEach(function (e) {
      var on = e.name === name;
      e.button.classList.toggle('active', on);
      e.view.hidden = !on;
      if (on && !e.built) {
        e.built = true;
        e.build(e.view, e);
      }
      if (on && e.onShow) e.onShow();
    });
  }

  // otherPeer says whether a session's peer is a server (an MCP or a
  // language server) rather than an Agentty plugin: its profile says so
  // (profile.IsServer).
  function otherPeer(m) {
    return !!(m && (m.profile === 'mcp' || m.profile === 'lsp'));
  }

  // shortVersion is a peer's version as show and ls print it
  // (present.ShortVersion): a JSON object (gopls sends Go's build
  // information) gives its Version, Main.Version or GoVersion; else its
  // first line; at most 24 characters.
  function shortVersion(v) {
    v = String(v || '').trim();
    if (v.charAt(0) === '{') {
      try {
        var o = JSON.parse(v);
        v = String(o.Version || (o.Main && o.Main.Version) || o.GoVersion || v);
      } catch (e) { /* not JSON: shown as it is */ }
    }
    return cut(v.split(/[\r\n]/)[0], 24);
  }

  function metaLine(m) {
    if (!m) return el('div', 'meta', 'no session metadata');
    var parts = [];
    if (otherPeer(m)) {
      var who = m.plugin && m.plugin.id ? ' ' + [m.plugin.id, shortVersion(m.plugin.version)].filter(Boolean).join(' ') : '';
      parts.push(m.profile + ' server' + who);
      if (m.protocol) parts.push('protocol ' + cut(m.protocol, 24));
      if (m.hostName) parts.push('client ' + [cut(m.hostName, 40), shortVersion(m.hostVersion)].filter(Boolean).join(' '));
    } else if (m.plugin && (m.plugin.id || m.plugin.name)) parts.push('plugin ' + [m.plugin.name || m.plugin.id, m.plugin.version].filter(Boolean).join(' '));
    if (m.apiVersion) parts.push('API ' + m.apiVersion);
    if (m.command && m.command.length) parts.push(m.command.join(' '));
    if (m.started && !/^0001-/.test(m.started)) parts.push('started ' + m.started.replace('T', ' ').replace(/\.\d+/, ''));
    if (m.status) parts.push(m.status);
    if (m.exit && (m.exit.code !== null && m.exit.code !== undefined)) parts.push('exit ' + m.exit.code);
    if (m.exit && m.exit.signal) parts.push('killed by ' + m.exit.signal);
    if (m.frames && m.frames.in + m.frames.out + m.frames.err > 0) parts.push(m.frames.in + ' in · ' + m.frames.out + ' out · ' + m.frames.err + ' stderr');
    return el('div', 'meta', visible(parts.join('  ·  ')));
  }

  function findingsByIndex(list) {
    var m = new Map();
    (list || []).forEach(function (x) {
      if (x.index < 0) return;
      if (!m.has(x.index)) m.set(x.index, []);
      m.get(x.index).push(x);
    });
    return m;
  }

  function panelsView(frames, jump) {
    return function (v) {
      var list = [];
      frames.forEach(function (f, i) { if (isSetPanel(f)) list.push(i); });
      if (!list.length) {
        add(v, el('p', 'empty', 'The plugin never set a panel.'));
        return;
      }
      add(v, el('p', 'muted', list.length + ' ui/setPanel calls, in order. A call the host answered with an error left the old panel in place.'));
      var grid = el('div', 'gallery');
      var more = el('button', 'more', '');
      more.type = 'button';
      var shown = 0;
      var next = function () {
        list.slice(shown, shown + PAGE).forEach(function (i) {
          var f = frames[i];
          var fig = el('figure', 'panel-card');
          fig.dataset.seq = String(f.s);
          var cap = el('figcaption');
          add(cap, linkButton('frame ' + f.s, function () { jump(i); }), ' · ' + fmtAt(f.t));
          if (f.p && frames[f.p - 1].k === 'error') {
            add(cap, el('span', 'rejected', ' rejected by the host: ' + summary(frames[f.p - 1])));
            fig.classList.add('rejected');
          }
          add(fig, cap, drawPanel(treeOf(f)));
          grid.appendChild(fig);
        });
        shown = Math.min(shown + PAGE, list.length);
        more.textContent = 'show ' + Math.min(PAGE, list.length - shown) + ' more of ' + (list.length - shown);
        more.hidden = shown >= list.length;
      };
      more.addEventListener('click', next);
      next();
      add(v, grid, more);
    };
  }

  function findingsView(list, jump) {
    return function (v) {
      var t = el('table', 'findings');
      add(t, add(el('thead'), add(el('tr'), el('th', '', 'level'), el('th', '', 'rule'), el('th', '', 'frame'), el('th', '', 'method'), el('th', '', 'path'), el('th', '', 'message'))));
      var tb = el('tbody');
      list.forEach(function (x) {
        var tr = el('tr', 'level-' + (['error', 'warning', 'info'].indexOf(x.level) >= 0 ? x.level : 'info'));
        var seq = el('td');
        if (x.index >= 0) add(seq, linkButton('frame ' + x.seq, function () { jump(x.index); }));
        else add(seq, 'session');
        add(tr, el('td', 'level', x.level), el('td', 'rule', x.rule), seq, el('td', '', x.method || ''), el('td', 'path', x.path || ''), el('td', '', x.message));
        tb.appendChild(tr);
      });
      add(v, add(t, tb));
    };
  }

  function timelineView(frames, opts) {
    return function (v, entry) {
      var tl = new Timeline(frames, opts);
      v.appendChild(tl.el);
      entry.onShow = function () { tl.render(); };
      entry.timeline = tl;
      tl.render();
    };
  }

  function header(title) {
    var h = el('header', 'top');
    add(h, el('h1', '', visible(title)));
    return h;
  }

  function sessionPage() {
    var h = header(D.title);
    add(h, metaLine(D.meta));
    var nav = el('nav', 'tabs');
    var main = el('main');
    add(h, nav);
    add(app, h, main);
    var tab = tabs(nav, main);
    var findings = findingsByIndex(D.findings);
    var tl;
    var jump = function (i) {
      show('timeline');
      tl.timeline.jump(i);
    };
    var opts = { findings: findings, laneNote: ' (and stderr)', peerLane: otherPeer(D.meta) ? 'server' : 'plugin' };
    tl = tab('timeline', 'Timeline', timelineView(D.frames, opts));
    opts.show = function () { show('timeline'); };
    var nPanels = D.frames.filter(isSetPanel).length;
    // An MCP or a language server draws no panel: no empty tab for one.
    if (nPanels > 0 || !otherPeer(D.meta)) tab('panels', 'Panels (' + nPanels + ')', panelsView(D.frames, jump));
    if (D.findings && D.findings.length) {
      var errs = D.findings.filter(function (x) { return x.level === 'error'; }).length;
      tab('findings', 'Findings (' + D.findings.length + (errs ? ', ' + errs + ' errors' : '') + ')', findingsView(D.findings, jump));
    }
    tab('session', 'Session', function (v) { add(v, el('pre', 'json', JSON.stringify(D.meta, null, 2))); });
    show('timeline');
  }

  // ---------- replay ----------

  var FOLD = 8; // runs of equal lines longer than this are folded

  function jsonDiff(lines) {
    var t = el('table', 'json-diff');
    add(t, add(el('thead'), add(el('tr'), el('th', 'n', ''), el('th', '', 'recorded'), el('th', 'n', ''), el('th', '', 'replayed'))));
    var tb = el('tbody');
    var cls = { '=': 'op-same', '~': 'op-changed', '-': 'op-removed', '+': 'op-added' };
    var rowOf = function (l) {
      var tr = el('tr', cls[l.o] || '');
      var left = el('td', 'code', visible(l.l || ''));
      var right = el('td', 'code', visible(l.r || ''));
      if (l.o !== '=') {
        if (l.a) left.classList.add('changed-line');
        if (l.b) right.classList.add('changed-line');
      }
      add(tr, el('td', 'n', l.a || ''), left, el('td', 'n', l.b || ''), right);
      return tr;
    };
    for (var i = 0; i < lines.length;) {
      if (lines[i].o !== '=') {
        tb.appendChild(rowOf(lines[i++]));
        continue;
      }
      var j = i;
      while (j < lines.length && lines[j].o === '=') j++;
      var n = j - i;
      var head = i === 0 ? 0 : 3;
      var tail = j === lines.length ? 0 : 3;
      if (n > FOLD && n > head + tail + 1) {
        for (var k = i; k < i + head; k++) tb.appendChild(rowOf(lines[k]));
        var hidden = lines.slice(i + head, j - tail);
        var fold = el('tr', 'fold');
        var td = el('td', '', '⋯ ' + hidden.length + ' unchanged lines (click to show)');
        td.colSpan = 4;
        fold.appendChild(td);
        fold.addEventListener('click', (function (fold, hidden) {
          return function () {
            var frag = document.createDocumentFragment();
            hidden.forEach(function (l) { frag.appendChild(rowOf(l)); });
            fold.replaceWith(frag);
          };
        })(fold, hidden));
        tb.appendChild(fold);
        for (k = j - tail; k < j; k++) tb.appendChild(rowOf(lines[k]));
      } else {
        for (k = i; k < j; k++) tb.appendChild(rowOf(lines[k]));
      }
      i = j;
    }
    return add(t, tb);
  }

  function differenceCard(d, k, jumpRec, jumpLive) {
    var c = el('article', 'difference kind-' + (['changed', 'missing', 'extra', 'moved', 'exit'].indexOf(d.kind) >= 0 ? d.kind : 'other'));
    c.dataset.index = String(k);
    c.dataset.kind = d.kind;
    var head = el('div', 'diff-head');
    add(head, el('span', 'dkind', d.kind), el('span', 'what', visible(d.what)));
    var where = el('span', 'where');
    if (d.rec) add(where, 'recorded ', linkButton('seq ' + d.rec.seq, function () { jumpRec(d.rec.index); }));
    if (d.rec && d.live) add(where, ', ');
    if (d.live) add(where, 'replayed ', linkButton('seq ' + d.live.seq, function () { jumpLive(d.live.index); }));
    add(head, where);
    add(c, head);
    if (d.changes && d.changes.length) {
      var t = el('table', 'changes');
      d.changes.forEach(function (x) {
        add(t, add(el('tr'), el('td', 'path', x.path), el('td', 'old', x.old === '' ? '(absent)' : visible(x.old)), el('td', 'arrow', '→'), el('td', 'new', x.new === '' ? '(absent)' : visible(x.new))));
      });
      add(c, t);
    }
    if (d.lines && d.lines.length) add(c, jsonDiff(d.lines));
    if (d.panel) {
      var pd = el('div', 'panel-diff');
      [['recorded', d.rec], ['replayed', d.live]].forEach(function (s) {
        var side = el('div', 'side side-' + (s[0] === 'recorded' ? 'recorded' : 'live'));
        add(side, el('h4', '', s[0]));
        if (s[1]) {
          var panel = drawPanel(treeOf({ r: s[1].raw, u: s[1].u }));
          outline(panel, d.outline);
          add(side, panel);
        } else {
          add(side, el('p', 'muted', s[0] === 'recorded' ? 'not in the recording' : 'not said in the replay'));
        }
        add(pd, side);
      });
      add(c, pd);
    }
    return c;
  }

  function replayPage() {
    var r = D.replay;
    var h = header(D.title);
    var verdict;
    if (r.error) verdict = el('span', 'verdict verdict-error', 'could not run');
    else if (r.same) verdict = el('span', 'verdict verdict-ok', 'same');
    else verdict = el('span', 'verdict verdict-fail', r.diffs.length + (r.diffs.length === 1 ? ' difference' : ' differences'));
    add(h, add(el('div', 'summary-line'), verdict, ' compared ' + r.compared[0] + ' recorded and ' + r.compared[1] + ' replayed frames of the plugin' + (r.elapsedMs > 0 ? ' · ran ' + (r.elapsedMs < 1000 ? r.elapsedMs + 'ms' : (r.elapsedMs / 1000).toFixed(2) + 's') : '')));
    add(h, metaLine(D.meta));
    var nav = el('nav', 'tabs');
    var main = el('main');
    add(h, nav);
    add(app, h, main);
    var tab = tabs(nav, main);
    var rec, live;
    var jumpRec = function (i) { if (i >= 0) { show('recorded'); rec.timeline.jump(i); } };
    var jumpLive = function (i) { if (i >= 0) { show('replayed'); live.timeline.jump(i); } };
    tab('differences', 'Differences (' + r.diffs.length + ')', function (v) {
      var s = el('div', 'summary');
      if (r.error) add(s, el('p', 'error', 'could not run: ' + visible(r.error)));
      (r.notes || []).forEach(function (n) { add(s, el('p', 'note', 'note: ' + visible(n))); });
      (r.unmatched || []).forEach(function (u) { add(s, el('p', 'note', 'unanswered: the plugin asked ' + visible(u) + ', which the recording never answered; it got an error')); });
      if (!r.diffs.length && !r.error) add(s, el('p', 'empty', 'No differences: the plugin said what it said in the recording.'));
      add(v, s);
      r.diffs.forEach(function (d, k) { add(v, differenceCard(d, k, jumpRec, jumpLive)); });
    });
    rec = tab('recorded', 'Recorded (' + D.frames.length + ' frames)', timelineView(D.frames, { show: function () { show('recorded'); } }));
    live = tab('replayed', 'Replayed (' + r.live.length + ' frames)', timelineView(r.live, { show: function () { show('replayed'); } }));
    tab('session', 'Session', function (v) { add(v, el('pre', 'json', JSON.stringify(D.meta, null, 2))); });
    // Build the timelines now, so that links into them work at once.
    show('recorded');
    show('replayed');
    show('differences');
  }

  try {
    app.replaceChildren();
    if (D.kind === 'replay') replayPage();
    else sessionPage();
    document.body.dataset.ready = String(Math.round(performance.now()));
  } catch (e) {
    document.body.dataset.error = String((e && e.stack) || e);
    app.prepend(el('pre', 'error', 'This report could not be drawn: ' + document.body.dataset.error));
  }
