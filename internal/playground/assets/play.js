// tapedeck play: the page is the host. It draws the plugin's panel with
// the report's renderer (drawPanel, live), its toasts and badge, and the
// report's timeline, live; what the person does goes to the playground,
// which writes the exact frames the host writes.

  // The token comes in the address (the URL tapedeck play printed, or the
  // file --open wrote); it is kept in this tab's session storage (for a
  // reload: see again.js) and taken out of the address bar, which keeps no
  // secret.
  var params = new URLSearchParams(location.search);
  var tokenKey = 'tapedeck-play-token';
  var token = params.get('token') || '';
  try {
    if (token) sessionStorage.setItem(tokenKey, token);
    else token = sessionStorage.getItem(tokenKey) || '';
  } catch (e) { /* no session storage: a reload asks for the URL again */ }
  if (params.has('token')) history.replaceState(null, '', location.pathname);
  var app = document.getElementById('app');

  // What the tests read: every frame as it arrived, with the time.
  var received = [];
  window.tapedeckPlay = { received: received };

  var S = null; // the last reset, kept up to date
  var frames = []; // the current run's timeline entries
  var findings = new Map();
  var tl = null;
  var panelFrames = []; // indexes of ui/setPanel frames the host took
  var dom = {};
  // fields: input id → the host's view of a text field (see syncField).
  var fields = {};
  var sending = Promise.resolve(); // posts go out one after another, in order

  function status(text, isError) {
    dom.status.textContent = text;
    dom.status.classList.toggle('error', !!isError);
  }

  // post sends an action; a ui/event's value given as JSON text
  // (rawValue: a number as the host writes it, 300.0) goes as that text.
  function post(body) {
    var text;
    if (body.rawValue !== undefined) {
      var rest = Object.assign({}, body);
      delete rest.rawValue;
      delete rest.value;
      text = JSON.stringify(rest).slice(0, -1) + ',"value":' + body.rawValue + '}';
    } else {
      text = JSON.stringify(body);
    }
    return fetch('api', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Tapedeck-Token': token },
      body: text
    }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw Object.assign(new Error(j.error || ('HTTP ' + r.status)), { exists: j.exists });
        return j;
      });
    }).catch(function (e) {
      status(String(e.message || e), true);
      throw e;
    });
  }

  function send(b) {
    sending = sending.then(function () {
      return post(b).then(function () { status('sent ui/event ' + b.element + ' ' + b.event); }, function () {});
    });
    return sending;
  }

  function uiEvent(element, event, extra) {
    var b = { do: 'ui', element: element, event: event };
    if (extra && extra.rawValue !== undefined) b.value = JSON.parse(extra.rawValue);
    else if (extra && extra.value !== undefined) b.value = extra.value;
    if (extra && extra.item !== undefined) b.item = extra.item;
    if (extra && extra.action !== undefined) b.action = extra.action;
    if (extra && extra.rawValue !== undefined) b.rawValue = extra.rawValue;
    return send(b);
  }

  // The host's text fields (its plugin_panel.rs): typing sends change once
  // it has paused 250 ms; Enter sends submit; a click on any other control
  // of the panel first sends the typing not sent yet (flush). A tree from
  // the plugin replaces what is typed only as syncField says.
  var TYPING_PAUSE = 250;

  function fieldOf(id, value) {
    if (!fields[id]) fields[id] = { applied: value, fromPlugin: value, submitted: false, generation: 0, text: value };
    return fields[id];
  }

  function typing(id, text) {
    var f = fieldOf(id, '');
    f.text = text;
    f.submitted = false; // typing again: an empty value from the plugin is an old one
    if (f.applied === text) return;
    var g = ++f.generation;
    setTimeout(function () {
      if (fields[id] !== f || f.generation !== g) return;
      f.applied = text;
      uiEvent(id, 'change', { value: text });
    }, TYPING_PAUSE);
  }

  function flushFields() {
    Object.keys(fields).forEach(function (id) {
      var f = fields[id];
      f.submitted = true;
      if (f.applied !== f.text) {
        f.generation++;
        f.applied = f.text;
        uiEvent(id, 'change', { value: f.text });
      }
    });
  }

  // syncField: a tree arrived with value for a field showing typed (the
  // host's sync_field and should_apply): true when value replaces it.
  function syncField(f, typed, value, focused) {
    var changed = f.fromPlugin !== value;
    f.fromPlugin = value;
    if (typed === value) {
      f.applied = value;
      return false;
    }
    // Typing not sent yet waits for its answer; only a value the plugin
    // changed meanwhile is looked at.
    if (!changed && f.applied !== typed) return false;
    var submitted = f.submitted;
    f.submitted = false;
    var apply = !focused || (submitted && value === '') || (changed && typed.indexOf(value) !== 0);
    if (apply) f.applied = value;
    return apply;
  }

  function act(element, event, extra) {
    extra = extra || {};
    if (S && S.state && !S.state.running) {
      status('the plugin is not running: Restart it', true);
      return;
    }
    if (event === 'type') {
      typing(element, extra.value);
      return;
    }
    if (event === 'submit') {
      var f = fieldOf(element, '');
      f.text = extra.value;
      f.applied = extra.value;
      f.submitted = true;
      uiEvent(element, 'submit', { value: extra.value });
      return;
    }
    if (extra.flush !== false) flushFields();
    uiEvent(element, event, extra);
  }

  // The host's own toasts (a copied code block) go where the plugin's do.
  window.tapedeckHostToast = function (text) {
    showToast(drawToast({ message: text, kind: 'success' }, false, ''));
  };

  function button(text, onClick, cls) {
    var b = el('button', cls || '', text);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }

  // ---------- the layout ----------

  function build() {
    app.replaceChildren();
    var top = el('header', 'play-top');
    dom.title = el('h1', '', 'tapedeck play');
    dom.state = el('span', 'state', '');
    var keep = el('span', 'keep');
    dom.keepName = el('input', 'keep-name');
    dom.keepName.type = 'text';
    dom.keepName.placeholder = 'name';
    dom.keepName.value = 'session';
    // A name kept before is overwritten only once the person says so.
    function keepAs(name, overwrite) {
      status('keeping ' + name + '…');
      post({ do: 'keep', name: name, overwrite: overwrite }).then(function (k) {
        status('kept ' + k.tape + ', ' + k.script + ' and ' + k.data + ' · ' + k.test.split('\n')[0], !k.same);
      }, function (e) {
        if (e.exists && window.confirm(e.message + '\n\nOverwrite ' + e.exists.slice(0, -1).join(', ') + (e.exists.length > 1 ? ' and ' : '') + e.exists[e.exists.length - 1] + '?')) keepAs(name, true);
      });
    }
    dom.keepButton = button('Keep it', function () { keepAs(dom.keepName.value, false); }, 'primary keep-button');
    dom.keepButton.title = 'End the session the host\'s way, write its host script, its golden tape and the data it started from into the tapes folder, replay the tape, and start afresh';
    add(keep, dom.keepName, ' ', dom.keepButton);
    add(top, dom.title, dom.state, el('span', 'spacer'),
      button('Restart', function () { post({ do: 'restart' }).catch(function () {}); }, 'restart'),
      button('Shutdown', function () { post({ do: 'shutdown' }).catch(function () {}); }, 'shutdown'),
      keep,
      button('Quit', function () { post({ do: 'quit' }).then(function () { status('the playground has ended; close this tab'); }, function () {}); }, 'quit'));

    var main = el('div', 'play-main');
    var left = el('div', 'play-left');
    dom.panelBox = el('section', 'live-panel');
    dom.panelTitle = el('span', 'panel-title', 'Panel');
    dom.badge = el('span', 'badge-slot');
    dom.panelNote = el('span', 'panel-note', '');
    add(dom.panelBox, add(el('div', 'panel-head'), dom.panelTitle, dom.badge, dom.panelNote));
    dom.panel = el('div', 'panel-slot');
    dom.rejected = el('div', 'rejected-note');
    // Beside the panel, over the page next to it, as the host places them:
    // the tree's popover, and the toasts.
    dom.side = el('div', 'panel-side');
    dom.popover = el('div', 'popover-slot');
    dom.toasts = el('div', 'toasts');
    add(dom.side, dom.popover, dom.toasts);
    // A plugin that stopped: what it said last, and the way back.
    dom.crash = el('div', 'crash-banner');
    dom.crash.hidden = true;
    add(dom.panelBox, dom.crash, dom.panel, dom.rejected);

    var host = el('section', 'host');
    add(host, el('h3', '', 'The host'));
    dom.hostButtons = el('div', 'buttons');
    dom.commands = el('div', 'buttons commands');
    var url = el('div', 'url');
    dom.url = el('input', 'url-input');
    dom.url.type = 'text';
    add(url, dom.url, button('url/open', function () { post({ do: 'url/open', url: dom.url.value }).catch(function () {}); }, 'url-open'));
    dom.context = el('textarea', 'context');
    dom.context.rows = 3;
    dom.context.spellcheck = false;
    add(host, dom.hostButtons, dom.commands, url,
      add(el('p', 'muted'), 'Context (context/get answers it; every event carries it):'), dom.context,
      button('context/changed', function () {
        var c;
        try { c = JSON.parse(dom.context.value); } catch (e) { status('the context is not JSON: ' + e.message, true); return; }
        post({ do: 'context/changed', context: c }).catch(function () {});
      }, 'context-changed'));
    add(dom.hostButtons,
      button('panel/open', function () { post({ do: 'panel/open' }).catch(function () {}); }, 'panel-open'),
      button('panel/close', function () { post({ do: 'panel/close' }).catch(function () {}); }, 'panel-close'));

    var answers = el('section', 'answers');
    dom.method = el('select', 'answer-method');
    dom.answer = el('textarea', 'answer-text');
    dom.answer.rows = 4;
    dom.answer.spellcheck = false;
    dom.method.addEventListener('change', showAnswer);
    add(answers, el('h3', '', 'Host answers'),
      add(el('p', 'muted'), 'What the host answers each request of the plugin\'s: {"result": …} or {"error": {"code": N, "message": "…"}}. Requests the manifest has no permission for are refused with -32001, unknown methods with -32601, as the host does.'),
      dom.method, dom.answer,
      button('Set answer', function () {
        var a;
        try { a = JSON.parse(dom.answer.value); } catch (e) { status('the answer is not JSON: ' + e.message, true); return; }
        post({ do: 'answer', method: dom.method.value, answer: a }).then(function () { status('the host now answers ' + dom.method.value + ' with ' + JSON.stringify(a)); }, function () {});
      }, 'set-answer'));

    dom.watch = el('section', 'watch');
    dom.watch.hidden = true;
    dom.kept = el('section', 'kept-list');
    add(left, dom.panelBox, host, answers, dom.watch, dom.kept);

    var right = el('div', 'play-right');
    dom.timeline = el('div', 'timeline-slot');
    dom.timeline.style.cssText = 'flex:1;min-height:0;display:flex;flex-direction:column';
    dom.findings = el('section', 'findings-live');
    add(right, dom.timeline, dom.findings);
    add(main, left, right);
    dom.status = el('div', 'play-status', 'connected');
    add(app, top, main, dom.status, dom.side);
    left.addEventListener('scroll', placeSide);
    window.addEventListener('resize', placeSide);
  }

  // placeSide keeps the popover and the toasts at the panel's right edge,
  // over the page beside it, wherever the panel has scrolled to.
  function placeSide() {
    var r = dom.panelBox.getBoundingClientRect();
    dom.side.style.left = Math.round(r.right + 12) + 'px';
    dom.side.style.top = Math.round(Math.max(r.top, 0) + 44) + 'px';
  }

  function showAnswer() {
    var m = dom.method.value;
    dom.answer.value = S && S.answers[m] ? JSON.stringify(S.answers[m]) : '';
  }

  function drawAnswers() {
    var keep = dom.method.value;
    dom.method.replaceChildren();
    Object.keys(S.answers).sort().forEach(function (m) {
      var o = el('option', S.edited[m] ? 'edited' : '', m + (S.edited[m] ? ' (edited)' : ''));
      o.value = m;
      dom.method.appendChild(o);
    });
    dom.method.value = keep && S.answers[keep] ? keep : 'prompt/inject';
    showAnswer();
  }

  function drawState(st) {
    if (!st) return;
    S.state = st;
    dom.state.className = 'state ' + (st.running ? 'running' : 'exited');
    dom.state.textContent = 'run ' + st.run + (st.running ? ' · running' : ' · ' + (st.exit || 'exited')) + (st.session ? ' · session ' + st.session : '');
    document.body.dataset.running = String(st.running);
    document.body.dataset.run = String(st.run);
    if (st.session) document.body.dataset.session = st.session;
    drawCrash();
  }

  // CRASH_LINES is how much of the plugin's log the host shows when it has
  // stopped: its last 12 lines.
  var CRASH_LINES = 12;

  // drawCrash: a plugin that is not running has its panel disabled, and a
  // banner says why, with the end of its stderr in whole lines (a
  // traceback together) and Restart at hand.
  function drawCrash() {
    var st = S && S.state;
    var over = !!(st && !st.running);
    dom.panelBox.classList.toggle('stopped', over);
    dom.crash.hidden = !over;
    document.body.dataset.crashed = String(over && !st.stopped);
    if (!over) {
      dom.crash.replaceChildren();
      return;
    }
    var name = S.plugin ? S.plugin.name || S.plugin.id : 'the plugin';
    var tail = frames.filter(function (f) { return f.d === 'err' && f.k === 'stderr'; }).slice(-CRASH_LINES).map(function (f) { return f.r || ''; });
    var head = st.stopped ? name + ' was stopped by the host (' + (st.exit || 'exited') + ')' : name + ' stopped: ' + (st.exit || 'exited');
    var restart = button('Restart', function () { post({ do: 'restart' }).catch(function () {}); }, 'primary crash-restart');
    dom.crash.className = 'crash-banner' + (st.stopped ? ' stopped' : ' failed');
    dom.crash.replaceChildren(add(el('div', 'crash-head'), el('span', 'crash-title', head), restart));
    if (tail.length) add(dom.crash, el('pre', 'crash-log', tail.map(function (l) { return visibleLine(l); }).join('\n')));
    else add(dom.crash, el('p', 'crash-none', 'It wrote nothing on stderr.'));
  }

  // visibleLine shows one line of a log whole: tabs stay tabs, other
  // control characters are escaped.
  function visibleLine(l) {
    return l.split('\t').map(visible).join('\t');
  }

  function drawKept() {
    dom.kept.replaceChildren();
    if (!S.kept.length) return;
    add(dom.kept, el('h3', '', 'Kept'));
    S.kept.forEach(function (k) {
      add(dom.kept, el('div', '', k.name + ': ' + k.tape + ' · ' + k.script + ' · ' + k.data), el('pre', k.same ? 'ok' : 'fail', k.test));
      // Why it does not pass, in words, and what to do.
      if (k.why && k.why.length) {
        var ul = el('ul', 'kept-why');
        k.why.forEach(function (w) { add(ul, el('li', '', w)); });
        add(dom.kept, ul);
      }
    });
  }

  function drawWatch(w) {
    dom.watch.hidden = !S.watch;
    dom.watch.replaceChildren();
    add(dom.watch, el('h3', '', 'Watch'));
    if (!w) {
      add(dom.watch, el('p', 'muted', 'Watching the plugin\'s files: a change starts it again and plays the actions so far.'));
      return;
    }
    // The diff the command line prints, line for line.
    var text = String(w.text || '').replace(/\n$/, '').split('\n').map(visibleLine).join('\n');
    add(dom.watch, el('p', w.same ? 'same' : 'differs', visible(w.why) + ': ' + (w.same ? 'the plugin said the same again' : 'the plugin said something else')), el('pre', 'watch-diff', text));
  }

  // ---------- the panel, its toasts and badge ----------

  function currentTree() {
    for (var k = panelFrames.length - 1; k >= 0; k--) {
      var f = frames[panelFrames[k]];
      if (f.p && frames[f.p - 1] && frames[f.p - 1].k === 'error') continue;
      if (f.refused) continue;
      return { tree: treeOf(f), index: panelFrames[k] };
    }
    return null;
  }

  function redraw() {
    var active = document.activeElement;
    var focused = active && active.dataset && active.dataset.id && active.closest && active.closest('.live-panel') ? active.dataset.id : null;
    var caret = focused ? [active.selectionStart, active.selectionEnd] : null;
    var suggesting = focused && active.parentNode && active.parentNode.querySelector('.suggest:not([hidden])') !== null;
    // What each field shows now, before the tree replaces the panel.
    var shown = {};
    Array.prototype.forEach.call(dom.panel.querySelectorAll('.field[data-id]'), function (i) { shown[i.dataset.id] = i.value; });
    var cur = currentTree();
    dom.panel.replaceChildren();
    dom.popover.replaceChildren();
    if (!cur) {
      add(dom.panel, el('p', 'panel-note', 'The plugin has not set a panel yet.'));
      return;
    }
    var p = drawPanel(cur.tree, act);
    dom.panel.appendChild(p);
    if (p.popoverCard) dom.popover.appendChild(p.popoverCard);
    placeSide();
    p.dataset.seq = String(frames[cur.index].s);
    var seen = {};
    Array.prototype.forEach.call(p.querySelectorAll('.field[data-id]'), function (i) {
      var id = i.dataset.id;
      var value = i.dataset.plugin;
      seen[id] = true;
      if (!fields[id] || shown[id] === undefined) {
        // A field the panel did not show: it shows the plugin's value.
        if (!fields[id]) fieldOf(id, value);
        fields[id].fromPlugin = value;
        fields[id].applied = value;
        fields[id].text = value;
        return;
      }
      var f = fields[id];
      var typed = shown[id];
      if (!syncField(f, typed, value, id === focused)) i.value = typed;
      f.text = i.value;
      if (id === focused) {
        i.focus();
        if (caret) i.setSelectionRange(Math.min(caret[0], i.value.length), Math.min(caret[1], i.value.length));
        if (i.refreshSuggestions && suggesting) i.refreshSuggestions();
      }
    });
    Object.keys(fields).forEach(function (id) { if (!seen[id]) delete fields[id]; });
  }

  // showToast puts a toast beside the panel, as the host does: it fades in
  // and goes 1.8 s later (a dropped one, which the host never shows, stays
  // a little longer, struck through).
  var TOAST_MS = 1800;

  function showToast(t) {
    placeSide();
    dom.toasts.prepend(t);
    while (dom.toasts.children.length > 6) dom.toasts.lastChild.remove();
    var leave = function () {
      t.classList.add('leaving');
      setTimeout(function () { t.remove(); }, 200);
    };
    setTimeout(function () {
      if (t.classList.contains('dropped')) setTimeout(leave, 2200);
      else leave();
    }, TOAST_MS);
  }

  function toast(i) {
    var f = frames[i];
    var m = parseLine(f);
    var t = drawToast(m && m.params, false, S && S.plugin ? S.plugin.name || S.plugin.id : '');
    t.dataset.index = String(i);
    showToast(t);
  }

  function badge(i) {
    var m = parseLine(frames[i]);
    dom.badge.replaceChildren(drawBadge(m && m.params ? m.params.text : ''));
  }

  // ---------- frames and findings ----------

  function take(f, live) {
    var i = frames.length;
    f.at = Date.now();
    if (live) received.push({ s: f.s, at: f.at, d: f.d, m: f.m || '', r: f.r || '' });
    if (tl && live) tl.append(f);
    else {
      frames.push(f);
      if ((f.k === 'response' || f.k === 'error') && f.p > 0 && frames[f.p - 1]) {
        frames[f.p - 1].p = i + 1;
        frames[f.p - 1].l = f.l;
      }
    }
    if (live && f.d === 'err' && S && S.state && !S.state.running) drawCrash();
    if (isSetPanel(f)) {
      panelFrames.push(i);
      if (live) redraw();
    } else if ((f.k === 'error') && f.p > 0 && isSetPanel(frames[f.p - 1])) {
      dom.rejected.textContent = 'The host refused the ui/setPanel of frame ' + frames[f.p - 1].s + ' (' + summary(f) + '): the old panel stays.';
      if (live) redraw();
    } else if (live && isCall(f, 'ui/notify')) {
      toast(i);
    } else if (isCall(f, 'ui/setBadge')) {
      badge(i);
    } else if (live && isCall(f, 'ui/showPanel')) {
      dom.panelBox.classList.add('shown');
      dom.panelNote.textContent = 'the plugin asked the host to show its panel (frame ' + f.s + ')';
      setTimeout(function () { dom.panelBox.classList.remove('shown'); }, 1500);
    } else if (f.d === 'in' && (f.k === 'notification') && (f.m === 'panel/open' || f.m === 'panel/close')) {
      dom.panelBox.classList.toggle('closed', f.m === 'panel/close');
      dom.panelNote.textContent = f.m === 'panel/close' ? 'closed by the host' : '';
    }
  }

  function finding(x) {
    if (x.index >= 0) {
      if (!findings.has(x.index)) findings.set(x.index, []);
      findings.get(x.index).push(x);
    }
    var line = findingLine(x);
    if (x.index >= 0) {
      add(line, ' ', linkButton('frame ' + x.seq, function () { tl.jump(x.index); }));
    }
    if (!dom.findings.firstChild) add(dom.findings, el('h3', '', 'check, live'));
    dom.findings.appendChild(line);
    if (x.rule === 'notify-dropped') {
      var t = dom.toasts.querySelector('.toast[data-index="' + x.index + '"]');
      if (t) {
        t.classList.add('dropped');
        add(t.querySelector('.toast-text') || t, el('span', 'toast-dropped', 'dropped by the host: within 700 ms of the last one shown'));
      }
      document.body.dataset.dropped = String((Number(document.body.dataset.dropped) || 0) + 1);
    }
    if (x.index >= 0 && x.level === 'error' && /^ui-/.test(x.rule) && frames[x.index] && isSetPanel(frames[x.index]) && frames[x.index].k === 'notification') {
      frames[x.index].refused = true;
      dom.rejected.textContent = 'The host drops the ui/setPanel of frame ' + x.seq + ' (' + x.rule + '): the old panel stays.';
      redraw();
    }
    if (tl) tl.render();
  }

  function reset(r) {
    S = r;
    frames = [];
    findings = new Map();
    panelFrames = [];
    dom.findings.replaceChildren();
    dom.rejected.textContent = '';
    dom.toasts.replaceChildren();
    dom.popover.replaceChildren();
    fields = {};
    dom.badge.replaceChildren();
    dom.panelBox.classList.remove('closed');
    var p = r.plugin;
    dom.title.textContent = 'tapedeck play · ' + visible([p.name || p.id, p.version].filter(Boolean).join(' '));
    dom.panelTitle.textContent = p.name || p.id;
    document.title = 'tapedeck play · ' + p.id;
    dom.commands.replaceChildren();
    (p.commands || []).forEach(function (c) {
      var b = button('command/execute ' + c.id, function () { post({ do: 'command/execute', command: c.id }).catch(function () {}); }, 'command');
      b.dataset.command = c.id;
      if (c.title) b.title = c.title;
      dom.commands.appendChild(b);
    });
    if (!dom.url.value) dom.url.value = 'agentty://plugin/' + p.id + '/open?from=playground';
    dom.context.value = JSON.stringify(r.context);
    drawAnswers();
    r.frames.forEach(function (f) { take(f, false); });
    r.findings.forEach(function (x) { finding(x); });
    tl = new Timeline(frames, { findings: findings, live: true, laneNote: ' (and stderr)' });
    dom.timeline.replaceChildren(tl.el);
    tl.render();
    drawState(r.state);
    drawKept();
    drawWatch(r.watched);
    redraw();
    document.body.dataset.ready = String(Math.round(performance.now()));
  }

  function onMessage(ev) {
    var m = JSON.parse(ev.data);
    switch (m.t) {
      case 'reset': reset(m); break;
      case 'frame': if (S && m.run === S.run) take(m.f, true); break;
      case 'finding': if (S && m.run === S.run) finding(m.x); break;
      case 'state': if (S && m.run === S.run) drawState(m); break;
      case 'context': S.context = m.context; dom.context.value = JSON.stringify(m.context); break;
      case 'answer': S.answers[m.method] = m.answer; S.edited[m.method] = true; drawAnswers(); break;
      case 'kept': S.kept.push(m); drawKept(); break;
      case 'watch': S.watched = m; window.tapedeckPlay.watched = m; drawWatch(m); document.body.dataset.watched = String(Number(document.body.dataset.watched || 0) + 1); break;
    }
  }

  try {
    build();
    var es = new EventSource('events?token=' + encodeURIComponent(token));
    es.onmessage = function (ev) {
      try {
        onMessage(ev);
      } catch (e) {
        document.body.dataset.error = String((e && e.stack) || e);
        status('could not draw: ' + document.body.dataset.error, true);
      }
    };
    es.onerror = function () { status('the connection to tapedeck play is lost; it reconnects when it can', true); };
  } catch (e) {
    document.body.dataset.error = String((e && e.stack) || e);
    app.prepend(el('pre', 'error', 'The playground could not be drawn: ' + document.body.dataset.error));
  }
