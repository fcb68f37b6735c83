// tapedeck's panel renderer, shared by the HTML report and the playground
// (one copy: report.Script wraps it with a page's own code in one
// function). It draws a ui/setPanel tree the way the host shows it, the
// badge and the toasts, with DOM APIs and textContent: no frame content is
// ever parsed as markup. drawPanel(tree, act) with act set draws a live
// panel whose elements send what the host sends (see act below).

  var PRETTY_MAX = 2 << 20; // lines longer than this are shown as they are

  // ---------- small helpers ----------

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var k = arguments[i];
      if (k === null || k === undefined || k === false) continue;
      parent.appendChild(typeof k === 'string' ? document.createTextNode(k) : k);
    }
    return parent;
  }

  function linkButton(text, onClick, title) {
    var b = el('button', 'link', text);
    b.type = 'button';
    if (title) b.title = title;
    b.addEventListener('click', function (ev) {
      ev.stopPropagation();
      onClick();
    });
    return b;
  }

  // visible makes control and bidi characters visible as escapes.
  function visible(s) {
    return s.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, function (c) {
      var n = c.charCodeAt(0);
      if (n === 9) return '\\t';
      if (n === 10) return '\\n';
      if (n === 13) return '\\r';
      if (n < 256) return '\\x' + (n < 16 ? '0' : '') + n.toString(16);
      return '\\u' + n.toString(16).padStart(4, '0');
    });
  }

  function cut(s, n) {
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }

  function fmtAt(ns) {
    var neg = ns < 0;
    if (neg) ns = -ns;
    var s = Math.floor(ns / 1e9);
    var us = Math.floor((ns % 1e9) / 1e3);
    return (neg ? '-' : '') + s + '.' + String(us).padStart(6, '0') + 's';
  }

  function fmtLatency(ns) {
    if (ns < 0) return '-' + fmtLatency(-ns);
    if (ns < 1e6) return (ns / 1e3).toFixed(0) + 'µs';
    if (ns < 1e9) return (ns / 1e6).toFixed(2) + 'ms';
    return (ns / 1e9).toFixed(3) + 's';
  }

  // str shows a value that should be a string.
  function str(v) {
    if (v === undefined || v === null) return '';
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    return JSON.stringify(v);
  }

  function first(v, names) {
    for (var i = 0; i < names.length; i++) {
      if (v[names[i]] !== undefined && v[names[i]] !== null) return v[names[i]];
    }
    return undefined;
  }

  // indentJSON pretty-prints JSON text without parsing it, so numbers keep
  // their digits and members their order.
  function indentJSON(s) {
    var out = [];
    var depth = 0;
    var n = s.length;
    var pad = function (d) { return '\n' + '  '.repeat(d); };
    for (var i = 0; i < n; i++) {
      var c = s[i];
      if (c === '"') {
        var j = i + 1;
        while (j < n && s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
        out.push(s.slice(i, j + 1));
        i = j;
      } else if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
        continue;
      } else if (c === '{' || c === '[') {
        var k = i + 1;
        while (k < n && (s[k] === ' ' || s[k] === '\t' || s[k] === '\n' || s[k] === '\r')) k++;
        if (s[k] === (c === '{' ? '}' : ']')) {
          out.push(c + s[k]);
          i = k;
        } else {
          depth++;
          out.push(c + pad(depth));
        }
      } else if (c === '}' || c === ']') {
        depth = Math.max(depth - 1, 0);
        out.push(pad(depth) + c);
      } else if (c === ',') {
        out.push(',' + pad(depth));
      } else if (c === ':') {
        out.push(': ');
      } else {
        out.push(c);
      }
    }
    return out.join('');
  }

  function globRe(p) {
    var re = '';
    for (var i = 0; i < p.length; i++) {
      var c = p[i];
      if (c === '*') re += '.*';
      else if (c === '?') re += '.';
      else re += c.replace(/[.+^${}()|[\]\\\/]/g, '\\$&');
    }
    return new RegExp('^' + re + '$');
  }

  // methodMatcher: a glob when the pattern has * or ?, else a substring.
  function methodMatcher(p) {
    if (!p) return null;
    if (/[*?]/.test(p)) {
      var re = globRe(p);
      return function (m) { return re.test(m); };
    }
    return function (m) { return m.indexOf(p) >= 0; };
  }

  var DIR_LABEL = { in: 'host → plugin', out: 'plugin → host', err: 'stderr', ev: 'event' };
  var ARROW = { in: '→', out: '←', err: '!', ev: '•' };
  var FILTER_LABEL = { in: 'host → plugin', out: 'plugin → host', err: '! stderr', ev: '• events' };

  // ---------- panels: one function per element type ----------
  //
  // Each element is drawn as the Agentty host draws it (its plugin panel
  // renderer; docs/agentty-elements.md has the table, field by field, with
  // the ui/event each control sends). A live panel (drawPanel with act)
  // sends what the host sends and changes nothing by itself: what it shows
  // is what the plugin last drew.

  var GAPS = ['none', 'small', 'medium', 'large'];
  var STYLES = ['body', 'title', 'muted', 'small', 'code', 'error', 'success'];
  var VARIANTS = ['primary', 'secondary', 'ghost', 'danger'];
  var TONES = ['neutral', 'info', 'success', 'warning', 'error'];
  var ALIGNS = ['start', 'center', 'end'];
  var FLOW_STATES = ['off', 'on', 'active', 'done', 'error'];
  var MAX_DEPTH = 48;
  // The host's limits on what it draws (agentty-bridge plugins/ui.rs).
  var MAX_COLUMNS = 6;
  var MAX_ROWS = 24;
  var MAX_LIST_DEPTH = 8;
  var INLINE_ROW_ACTIONS = 3;
  var MAX_SUGGESTIONS = 8;

  // enumClass is prefix-value for a known value, prefix-unknown otherwise
  // (frame content never becomes a class name of its own).
  function enumClass(e, prefix, v, allowed, dflt) {
    if (v === undefined || v === null) {
      if (dflt) e.classList.add(prefix + dflt);
      return;
    }
    if (typeof v === 'string' && allowed.indexOf(v) >= 0) {
      e.classList.add(prefix + v);
      return;
    }
    e.classList.add(prefix + 'unknown', 'bad-enum');
    e.title += ' · unknown ' + prefix.replace(/-$/, '') + ' ' + str(v);
  }

  function toneOf(v) {
    return typeof v === 'string' && TONES.indexOf(v) >= 0 ? v : 'neutral';
  }

  function elem(tag, type, path, cls) {
    var e = el(tag, 'el el-' + type + (cls ? ' ' + cls : ''));
    e.dataset.type = type;
    e.dataset.path = path;
    e.title = path + ' · ' + type;
    return e;
  }

  var SVG_NS = 'http://www.w3.org/2000/svg';

  // icon draws a Lucide icon as the host does: a name it does not have is
  // drawn as "puzzle" (the host's icon_named). tone colours it.
  function icon(name, tone) {
    var s = typeof name === 'string' && Object.prototype.hasOwnProperty.call(LUCIDE, name) ? name : 'puzzle';
    var svg = document.createElementNS(SVG_NS, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('fill', 'none');
    svg.setAttribute('stroke', 'currentColor');
    svg.setAttribute('stroke-width', '2');
    svg.setAttribute('stroke-linecap', 'round');
    svg.setAttribute('stroke-linejoin', 'round');
    svg.setAttribute('class', 'icon lucide-' + s);
    svg.setAttribute('aria-hidden', 'true');
    svg.dataset.icon = s;
    LUCIDE[s].forEach(function (shape) {
      var n = document.createElementNS(SVG_NS, shape[0]);
      Object.keys(shape[1]).forEach(function (k) { n.setAttribute(k, shape[1][k]); });
      svg.appendChild(n);
    });
    var t = document.createElementNS(SVG_NS, 'title');
    t.textContent = 'icon ' + (name === undefined ? '(none)' : str(name)) + (s !== name ? ' (the host draws puzzle)' : '');
    svg.appendChild(t);
    if (tone !== undefined) svg.classList.add('tone-' + toneOf(tone));
    return svg;
  }

  // iconTile is an icon in a small tinted square: list rows, cards, flow steps.
  function iconTile(name, cls) {
    return add(el('span', 'icon-tile ' + cls), icon(name));
  }

  function placeholder(path, what, cls) {
    var e = el('div', 'el el-placeholder ' + (cls || ''), what);
    e.dataset.path = path;
    e.title = path;
    return e;
  }

  // children draws a container's children; a popover among them is drawn
  // beside the panel, not in it (the host skips it here).
  function children(parent, v, path, depth, member) {
    member = member || 'children';
    var c = v[member];
    if (Array.isArray(c)) {
      for (var i = 0; i < c.length; i++) {
        if (c[i] && c[i].type === 'popover') continue;
        parent.appendChild(renderNode(c[i], path + '.' + member + '[' + i + ']', depth + 1));
      }
    } else if (c !== undefined && c !== null) {
      parent.appendChild(placeholder(path + '.' + member, member + ' is not a list of elements'));
    }
    return parent;
  }

  // FIELDS are the members the host reads of each element type (its
  // serde schema, agentty-bridge plugins/ui.rs); any other member the host
  // drops without a word, and the page says so in a small chip.
  var FIELDS = {
    column: ['children', 'gap'], row: ['children', 'gap', 'wrap'], section: ['title', 'children'],
    text: ['text', 'style'], button: ['id', 'label', 'icon', 'variant', 'disabled', 'menu'],
    input: ['id', 'placeholder', 'value', 'rows', 'mono', 'completions', 'language'],
    list: ['id', 'items', 'empty'], choice: ['id', 'options', 'value'], toggle: ['id', 'label', 'value'],
    badge: ['text', 'tone'], spinner: ['text'], divider: [],
    flow: ['id', 'steps', 'reorderable', 'insertMenu'], popover: ['id', 'title', 'children'],
    card: ['title', 'subtitle', 'icon', 'tone', 'children', 'id', 'closable'],
    grid: ['children', 'columns', 'gap', 'widths', 'id', 'align', 'resizable', 'fill'],
    tabs: ['id', 'tabs', 'value', 'children', 'fill', 'addMenu'],
    table: ['id', 'columns', 'rows', 'empty', 'selected'], keyValue: ['items'],
    stat: ['label', 'value', 'detail', 'icon', 'tone'], progress: ['value', 'label', 'detail', 'tone'],
    callout: ['text', 'title', 'icon', 'tone'], select: ['id', 'options', 'value', 'placeholder', 'disabled'],
    checkbox: ['id', 'label', 'value', 'description', 'disabled'], code: ['text', 'language', 'title']
  };

  // extras marks the members of v the host does not read: it drops them,
  // so the page shows them apart, as what the plugin sent for nothing.
  function extras(e, v, known) {
    var box = null;
    Object.keys(v).forEach(function (k) {
      if (k === 'type' || known.indexOf(k) >= 0) return;
      if (!box) box = el('div', 'extras');
      var x = v[k];
      var shown = Array.isArray(x) ? '[' + x.length + ' entries]' : (x && typeof x === 'object' ? '{…}' : str(x));
      var chip = add(el('span', 'extra'), el('span', 'extra-k', k), el('span', 'extra-v', cut(shown, 80)));
      chip.title = 'the host does not read "' + k + '" of a ' + v.type + ': it drops it';
      add(box, chip);
    });
    if (box) e.appendChild(box);
    return e;
  }

  function same(a, b) {
    return a === b || (a !== undefined && JSON.stringify(a) === JSON.stringify(b));
  }

  var R = new Map();

  // acting is the live panel's event sink while drawPanel draws one, null
  // for a drawn-only panel (the report): act(element, event, extra) with
  // extra holding value (or rawValue, JSON text), item and action as the
  // host's ui/event has them, and flush: false for the events the host
  // sends without first sending the typing it has not sent yet.
  var acting = null;
  // popover is the first popover of the tree being drawn: the host shows
  // that one, beside the panel.
  var popoverFound = null;

  function elementId(v) {
    return typeof v.id === 'string' ? v.id : null;
  }

  function live(e, fn) {
    e.classList.add('live');
    e.addEventListener('click', function (ev) {
      ev.stopPropagation();
      fn(ev);
    });
    return e;
  }

  // menuButton wires a control that opens a menu of entries (label, icon,
  // send): the host's menus of button, tabs addMenu, flow insertMenu and a
  // list row's "more" button. Picking one sends its event.
  function menuOf(anchor, entries, right) {
    var wrap = el('span', 'menu-anchor');
    var m = el('div', 'menu' + (right ? ' right' : ''));
    m.hidden = true;
    entries.forEach(function (x, i) {
      var it = add(el('div', 'menu-item'), x.icon !== undefined ? icon(x.icon) : null, el('span', '', x.label));
      it.dataset.index = String(i);
      if (x.value !== undefined) it.dataset.value = x.value;
      if (acting) {
        var send = x.send;
        live(it, function () {
          m.hidden = true;
          send();
        });
      }
      m.appendChild(it);
    });
    if (acting) {
      live(anchor, function () {
        var open = m.hidden;
        closeMenus();
        m.hidden = !open;
      });
    } else {
      anchor.title += ' · menu: ' + entries.map(function (x) { return x.label; }).join(', ');
    }
    return add(wrap, anchor, m);
  }

  function closeMenus() {
    Array.prototype.forEach.call(document.querySelectorAll('.panel .menu, .popover-card .menu'), function (m) { m.hidden = true; });
  }

  if (typeof document !== 'undefined' && document.addEventListener) {
    document.addEventListener('click', function (ev) {
      if (!ev.target.closest || !ev.target.closest('.menu-anchor')) closeMenus();
    });
  }

  function optionList(v) {
    return Array.isArray(v) ? v.filter(function (o) { return o && typeof o === 'object'; }) : [];
  }

  function emptyState(text) {
    return add(el('div', 'empty-state'), icon('list'), el('div', '', text));
  }

  // API 1

  R.set('column', function (v, path, depth) {
    var e = elem('div', 'column', path);
    enumClass(e, 'gap-', v.gap, GAPS, 'medium');
    return children(e, v, path, depth);
  });

  // fillsRow: the elements that share a row's width instead of shrinking
  // to their narrowest (the host's fills_row); a title text is as wide as
  // its words, a select as wide as its longest option.
  var FILLS_ROW = ['input', 'select', 'card', 'stat', 'progress', 'callout', 'keyValue', 'table', 'code', 'grid'];

  function selectWidth(v) {
    var w = function (s) { return Array.from(str(s)).reduce(function (n, c) { return n + (c.length > 1 || c.charCodeAt(0) > 0x7ff ? 2 : 1); }, 0); };
    var longest = optionList(v.options).reduce(function (n, o) { return Math.max(n, w(o.label)); }, v.placeholder === undefined ? 0 : w(v.placeholder));
    return Math.max(96, Math.min(280, longest * 7.2 + 48));
  }

  R.set('row', function (v, path, depth) {
    var e = elem('div', 'row', path);
    enumClass(e, 'gap-', v.gap, GAPS, 'medium');
    if (v.wrap === true) e.classList.add('wrap');
    children(e, v, path, depth);
    Array.prototype.forEach.call(e.children, function (c) {
      var t = c.dataset.type;
      if (t === 'select') c.style.width = selectWidth(c.__v || {}) + 'px';
      else if (t === 'text') c.classList.add(c.classList.contains('style-title') ? 'in-row-title' : 'in-row-fill');
      else if (FILLS_ROW.indexOf(t) >= 0) c.classList.add('in-row-fill');
    });
    return e;
  });

  R.set('section', function (v, path, depth) {
    var e = elem('section', 'section', path);
    add(e, el('div', 'section-title', str(v.title)));
    return add(e, children(el('div', 'section-body'), v, path, depth));
  });

  R.set('text', function (v, path) {
    var e = elem('div', 'text', path);
    enumClass(e, 'style-', v.style, STYLES, 'body');
    e.textContent = str(v.text);
    e.title = path + ' · text';
    return e;
  });

  R.set('button', function (v, path) {
    var e = elem('button', 'button', path, 'btn');
    e.type = 'button';
    enumClass(e, 'variant-', v.variant, VARIANTS, 'secondary');
    var label = str(v.label);
    var iconOnly = label.trim() === '' && v.icon !== undefined && v.icon !== null;
    if (v.icon !== undefined && v.icon !== null) e.appendChild(icon(v.icon));
    if (!iconOnly) add(e, el('span', 'label', label));
    else e.classList.add('icon-only');
    var menu = optionList(v.menu);
    if (menu.length && !iconOnly) e.appendChild(icon('chevron-down'));
    var act = acting, id = elementId(v);
    if (v.disabled === true) {
      e.disabled = true;
      e.classList.add('disabled');
      return e;
    }
    if (menu.length) {
      if (id !== null) e.dataset.id = id;
      return menuOf(e, menu.map(function (o) {
        return { label: str(o.label), value: str(o.value), send: function () { act(id, 'select', { value: o.value }); } };
      }), false);
    }
    if (act && id !== null) live(e, function () { act(id, 'click', {}); });
    return e;
  });

  R.set('input', function (v, path) {
    var e = elem('div', 'input', path);
    var rows = typeof v.rows === 'number' ? Math.min(Math.floor(v.rows), MAX_ROWS) : 0;
    var i = rows > 1 ? el('textarea', 'field') : el('input', 'field');
    if (rows > 1) i.rows = rows;
    else i.type = 'text';
    if (v.mono === true) i.classList.add('mono');
    if (typeof v.language === 'string') i.dataset.language = v.language;
    var act = acting, id = elementId(v);
    i.readOnly = !act || id === null;
    i.spellcheck = false;
    if (v.placeholder !== undefined) i.placeholder = str(v.placeholder);
    i.value = v.value === undefined ? '' : str(v.value);
    i.dataset.plugin = i.value;
    add(e, i);
    if (!i.readOnly) {
      i.dataset.id = id;
      var sugg = el('div', 'suggest');
      sugg.hidden = true;
      add(e, sugg);
      var comps = optionList(v.completions);
      var state = { range: null, items: [], sel: 0 };
      var showSuggest = function () {
        state.items = [];
        var w = comps.length ? completionWord(i.value, i.selectionStart) : null;
        if (w) state.items = matchingCompletions(comps, w.word, w.braced).slice(0, MAX_SUGGESTIONS);
        state.range = w;
        state.sel = 0;
        sugg.replaceChildren();
        state.items.forEach(function (c, k) {
          var row = add(el('div', 'suggestion' + (k === 0 ? ' active' : '')), el('span', 'label', str(c.label)), el('span', 'detail', str(c.detail)));
          row.addEventListener('mousedown', function (ev) {
            ev.preventDefault();
            state.sel = k;
            applySuggestion();
          });
          sugg.appendChild(row);
        });
        sugg.hidden = state.items.length === 0;
      };
      var applySuggestion = function () {
        var c = state.items[state.sel];
        if (!c || !state.range) return;
        var text = typeof c.insert === 'string' ? c.insert : str(c.label);
        i.value = i.value.slice(0, state.range.from) + text + i.value.slice(state.range.to);
        var at = state.range.from + text.length;
        i.setSelectionRange(at, at);
        sugg.hidden = true;
        state.items = [];
        act(id, 'type', { value: i.value, field: i });
      };
      // The suggestions under a field outlive a redraw of the panel, as the
      // host's do: the page calls this on the field it gave the focus back.
      i.refreshSuggestions = function () { if (comps.length) showSuggest(); };
      i.addEventListener('input', function () {
        if (comps.length) showSuggest();
        act(id, 'type', { value: i.value, field: i });
      });
      var swallow = false;
      i.addEventListener('beforeinput', function (ev) {
        if (swallow && (ev.inputType === 'insertLineBreak' || ev.inputType === 'insertParagraph' || ev.data === '\t' || ev.data === '\n' || ev.data === '\r')) ev.preventDefault();
        swallow = false;
      });
      i.addEventListener('keyup', function () { swallow = false; });
      i.addEventListener('blur', function () { setTimeout(function () { sugg.hidden = true; }, 200); });
      i.addEventListener('keydown', function (ev) {
        if (!sugg.hidden && state.items.length) {
          if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
            ev.preventDefault();
            state.sel = (state.sel + (ev.key === 'ArrowDown' ? 1 : state.items.length - 1)) % state.items.length;
            Array.prototype.forEach.call(sugg.children, function (r, k) { r.classList.toggle('active', k === state.sel); });
            return;
          }
          if (ev.key === 'Enter' || ev.key === 'Tab') {
            ev.preventDefault();
            swallow = true; // and the line break or tab a driven key event types after it
            applySuggestion();
            return;
          }
          if (ev.key === 'Escape') {
            sugg.hidden = true;
            return;
          }
        }
        // A text area takes Enter as a new line; a field sends submit.
        if (ev.key === 'Enter' && rows <= 1 && !ev.isComposing) {
          ev.preventDefault();
          act(id, 'submit', { value: i.value, field: i, flush: false });
        }
      });
    }
    return e;
  });

  // completionWord is the word a suggestion would replace, the cursor at
  // cursor: its range (a "{{" before it and a "}}" after it included) and
  // the word; null when the cursor is not at the end of a word or of a
  // "{{" just typed (the host's completion_word).
  function completionWord(text, cursor) {
    if (cursor === null || cursor === undefined || cursor > text.length) return null;
    var isWord = function (c) { return /[\p{L}\p{N}_\-.$]/u.test(c); };
    if (cursor < text.length && isWord(text[cursor])) return null;
    var start = cursor;
    while (start > 0 && isWord(text[start - 1])) start--;
    var word = text.slice(start, cursor);
    var braced = text.slice(0, start).endsWith('{{');
    if (!word && !braced) return null;
    var from = braced ? start - 2 : start;
    var to = braced && text.slice(cursor).startsWith('}}') ? cursor + 2 : cursor;
    return { from: from, to: to, word: word, braced: braced };
  }

  // matchingCompletions: those starting with the word, then those holding
  // it; without braces a word takes two letters, and a whole one offers
  // nothing (the host's matching_completions).
  function matchingCompletions(comps, word, braced) {
    if (!braced && Array.from(word).length < 2) return [];
    var lower = word.toLowerCase();
    var starts = [], holds = [];
    for (var k = 0; k < comps.length; k++) {
      var label = str(comps[k].label).toLowerCase();
      if (label === lower && !braced) return [];
      if (label.indexOf(lower) === 0) starts.push(comps[k]);
      else if (label.indexOf(lower) >= 0) holds.push(comps[k]);
    }
    return starts.concat(holds);
  }

  R.set('list', function (v, path) {
    var e = elem('div', 'list', path);
    var items = Array.isArray(v.items) ? v.items : [];
    if (!items.length) return add(e, emptyState(v.empty !== undefined && v.empty !== null ? str(v.empty) : 'No rows'));
    var act = acting, listId = elementId(v);
    if (listId === null) act = null;
    items.forEach(function (it, i) {
      var p = path + '.items[' + i + ']';
      var row = el('div', 'item');
      row.dataset.path = p;
      row.title = p + ' · list item';
      it = it && typeof it === 'object' ? it : { title: str(it) };
      if (typeof it.id === 'string') row.dataset.id = it.id;
      if (it.selected === true) row.classList.add('selected');
      var depth = typeof it.depth === 'number' ? Math.max(0, Math.min(Math.floor(it.depth), MAX_LIST_DEPTH)) : 0;
      if (depth > 0) {
        row.style.paddingLeft = (8 + depth * 14) + 'px';
        row.dataset.depth = String(depth);
      }
      if (act && typeof it.id === 'string') live(row, function () { act(listId, 'select', { item: it.id }); });
      if (it.icon !== undefined && it.icon !== null) {
        var tile = iconTile(it.icon, 'row-icon');
        tile.classList.add('tone-' + toneOf(it.tone));
        row.appendChild(tile);
      }
      if (typeof it.tag === 'string' && it.tag !== '') {
        var tag = el('span', 'item-tag tone-' + toneOf(it.tagTone), Array.from(it.tag).slice(0, 8).join(''));
        row.appendChild(tag);
      }
      var main = add(el('div', 'item-main'), el('div', 'item-title', str(it.title)));
      if (it.subtitle !== undefined && it.subtitle !== null) add(main, el('div', 'item-subtitle', str(it.subtitle)));
      if (it.detail !== undefined && it.detail !== null) add(main, el('div', 'item-detail', str(it.detail)));
      add(row, main);
      var actions = Array.isArray(it.actions) ? it.actions.filter(function (a) { return a && typeof a === 'object'; }) : [];
      if (actions.length) {
        var acts = el('div', 'item-actions');
        var inline = actions.length > INLINE_ROW_ACTIONS + 1 ? INLINE_ROW_ACTIONS : actions.length;
        actions.slice(0, inline).forEach(function (a, j) {
          var b = el('button', 'btn action variant-ghost');
          b.type = 'button';
          b.dataset.path = p + '.actions[' + j + ']';
          if (a.icon !== undefined && a.icon !== null) b.appendChild(icon(a.icon));
          if (a.label !== undefined && a.label !== null) add(b, el('span', 'label', str(a.label)));
          b.title = a.tooltip !== undefined && a.tooltip !== null ? str(a.tooltip) : b.dataset.path;
          if (typeof a.id === 'string') b.dataset.action = a.id;
          if (act && typeof it.id === 'string' && typeof a.id === 'string') {
            live(b, function () { act(listId, 'action', { item: it.id, action: a.id }); });
          }
          acts.appendChild(b);
        });
        if (inline < actions.length) {
          var more = el('button', 'btn action more-actions variant-ghost');
          more.type = 'button';
          more.appendChild(icon('ellipsis'));
          more.title = p + ' · more actions';
          acts.appendChild(menuOf(more, actions.slice(inline).map(function (a) {
            var label = str(first(a, ['label', 'tooltip', 'id']));
            return {
              label: label, icon: a.icon, value: str(a.id),
              send: function () { act(listId, 'action', { item: it.id, action: a.id }); }
            };
          }), true));
        }
        add(row, acts);
      }
      e.appendChild(row);
    });
    return e;
  });

  R.set('choice', function (v, path) {
    var e = elem('div', 'choice', path);
    var act = acting, id = elementId(v);
    optionList(v.options).forEach(function (o, i) {
      var b = el('span', 'option', str(o.label));
      b.dataset.path = path + '.options[' + i + ']';
      b.dataset.value = str(o.value);
      if (same(o.value, v.value === undefined ? '' : v.value)) b.classList.add('selected');
      if (act && id !== null) {
        b.tabIndex = 0;
        b.setAttribute('role', 'button');
        live(b, function () { act(id, 'change', { value: o.value }); });
      }
      e.appendChild(b);
    });
    return e;
  });

  R.set('toggle', function (v, path) {
    var e = elem('div', 'toggle', path);
    var on = v.value === true;
    var sw = el('span', 'switch ' + (on ? 'on' : 'off'));
    add(sw, el('span', 'knob'));
    var act = acting, id = elementId(v);
    if (act && id !== null) {
      e.tabIndex = 0;
      e.setAttribute('role', 'switch');
      // The new boolean is the opposite of what the plugin drew; the
      // switch moves when the plugin draws it moved.
      live(e, function () { act(id, 'change', { value: !on }); });
    }
    return add(e, sw, el('span', 'label', str(v.label)));
  });

  R.set('badge', function (v, path) {
    var e = elem('span', 'badge', path);
    enumClass(e, 'tone-', v.tone, TONES, 'neutral');
    e.textContent = str(v.text);
    e.title = path + ' · badge';
    return e;
  });

  R.set('spinner', function (v, path) {
    var e = elem('div', 'spinner', path);
    var s = icon('loader-circle');
    s.classList.add('spin');
    add(e, s);
    if (v.text !== undefined && v.text !== '') add(e, el('span', 'label', str(v.text)));
    return e;
  });

  R.set('divider', function (v, path) {
    return elem('hr', 'divider', path);
  });

  // API 4

  R.set('card', function (v, path, depth) {
    var e = elem('div', 'card', path);
    var tone = toneOf(v.tone);
    e.classList.add('tone-' + tone);
    var act = acting, id = elementId(v);
    if (v.title !== undefined || v.subtitle !== undefined || v.icon !== undefined) {
      var h = el('div', 'card-head');
      if (v.icon !== undefined && v.icon !== null) h.appendChild(iconTile(v.icon, 'card-icon tone-' + tone));
      var t = el('div', 'card-titles');
      if (v.title !== undefined && v.title !== null) add(t, el('div', 'card-title', str(v.title)));
      if (v.subtitle !== undefined && v.subtitle !== null) add(t, el('div', 'card-subtitle', str(v.subtitle)));
      add(h, t);
      if (id !== null && v.closable === true) {
        var x = el('button', 'btn icon-only ghost card-close');
        x.type = 'button';
        x.appendChild(icon('x'));
        x.title = path + ' · close';
        if (act) live(x, function () { act(id, 'close', {}); });
        add(h, x);
      }
      add(e, h);
    }
    if (Array.isArray(v.children) && v.children.length) add(e, children(el('div', 'card-body'), v, path, depth));
    return e;
  });

  // gridWidth reads one of a grid's widths: "240px" is fixed (16…1200),
  // "2" a share (1…12), anything else a share of 1.
  function gridWidth(w) {
    var t = str(w).trim();
    var m = /^(.*)px$/.exec(t);
    if (m && m[1].trim() !== '' && isFinite(Number(m[1]))) return { px: Math.max(16, Math.min(1200, Number(m[1]))) };
    var n = /^\d+$/.test(t) ? Number(t) : 1;
    return { share: Math.max(1, Math.min(12, n)) };
  }

  R.set('grid', function (v, path, depth) {
    var e = elem('div', 'grid', path);
    enumClass(e, 'gap-', v.gap, GAPS, 'medium');
    var widths = Array.isArray(v.widths) ? v.widths.slice(0, MAX_COLUMNS) : [];
    var cols = widths.length ? widths.length : (typeof v.columns === 'number' ? Math.max(1, Math.min(Math.floor(v.columns), MAX_COLUMNS)) : 2);
    var ws = [];
    for (var c = 0; c < cols; c++) ws.push(c < widths.length ? gridWidth(widths[c]) : { share: 1 });
    var handleCol = -1;
    if (typeof v.id === 'string' && v.resizable === true) {
      for (var k = 0; k < ws.length; k++) if (ws[k].px !== undefined) { handleCol = k; break; }
    }
    e.style.gridTemplateColumns = ws.map(function (w) { return w.px !== undefined ? w.px + 'px' : 'minmax(0, ' + w.share + 'fr)'; }).join(' ');
    if (v.align === 'center') e.classList.add('align-center');
    if (v.fill === true) e.classList.add('fill');
    var kids = Array.isArray(v.children) ? v.children : [];
    kids.forEach(function (child, i) {
      var cell = el('div', 'grid-cell');
      if (child && child.type === 'popover') return;
      cell.appendChild(renderNode(child, path + '.children[' + i + ']', depth + 1));
      if (i === handleCol) cell.appendChild(resizeHandle(e, ws, handleCol, v.id));
      e.appendChild(cell);
    });
    return e;
  });

  // resizeHandle is the bar on a resizable grid's first fixed column:
  // dragging it moves the edge (160…720 px), and the plugin hears the
  // width, a number, once the drag has rested 300 ms (resize).
  function resizeHandle(grid, ws, col, id) {
    var h = el('span', 'resize-handle');
    h.title = 'drag to resize (sends resize)';
    var act = acting;
    if (!act) return h;
    var width = ws[col].px, timer = null, startX = 0, startW = 0;
    var moved = function (ev) {
      var w = Math.round(Math.max(160, Math.min(720, startW + ev.clientX - startX)));
      if (w === width) return;
      width = w;
      ws[col] = { px: w };
      grid.style.gridTemplateColumns = ws.map(function (x) { return x.px !== undefined ? x.px + 'px' : 'minmax(0, ' + x.share + 'fr)'; }).join(' ');
      clearTimeout(timer);
      timer = setTimeout(function () { act(id, 'resize', { rawValue: w.toFixed(1), flush: false }); }, 300);
    };
    h.addEventListener('mousedown', function (ev) {
      ev.preventDefault();
      startX = ev.clientX;
      startW = width;
      var up = function () {
        document.removeEventListener('mousemove', moved);
        document.removeEventListener('mouseup', up);
      };
      document.addEventListener('mousemove', moved);
      document.addEventListener('mouseup', up);
    });
    return h;
  }

  R.set('tabs', function (v, path, depth) {
    var e = elem('div', 'tabs', path);
    var tabs = Array.isArray(v.tabs) ? v.tabs.filter(function (t) { return t && typeof t === 'object'; }) : [];
    var value = v.value === undefined ? '' : v.value;
    var act = acting, id = elementId(v);
    var strip = el('div', 'tab-strip');
    var bar = el('div', 'tab-bar');
    tabs.forEach(function (t, i) {
      var p = path + '.tabs[' + i + ']';
      var b = el('div', 'tab');
      b.dataset.path = p;
      b.dataset.id = str(t.id);
      b.title = p + ' · tab';
      if (same(t.id, value)) b.classList.add('active');
      if (t.icon !== undefined && t.icon !== null) b.appendChild(icon(t.icon));
      add(b, el('span', 'tab-label', str(t.label)));
      if (t.badge !== undefined && t.badge !== null) add(b, el('span', 'tab-badge', str(t.badge)));
      if (act && id !== null) live(b, function () { act(id, 'change', { value: t.id }); });
      if (t.closable === true) {
        var x = el('span', 'tab-close');
        x.appendChild(icon('x'));
        x.title = p + ' · close';
        if (act && id !== null) live(x, function () { act(id, 'close', { value: t.id }); });
        add(b, x);
      }
      bar.appendChild(b);
    });
    add(strip, bar);
    var addMenu = optionList(v.addMenu);
    if (addMenu.length) {
      var plus = el('button', 'btn icon-only ghost tab-add');
      plus.type = 'button';
      plus.appendChild(icon('plus'));
      plus.title = path + ' · add';
      add(strip, menuOf(plus, addMenu.map(function (o) {
        return { label: str(o.label), value: str(o.value), send: function () { act(id, 'add', { value: o.value }); } };
      }), true));
    }
    add(e, strip);
    // The plugin sends only the picked tab's content, as the children.
    return add(e, children(el('div', 'tab-body'), v, path, depth));
  });

  R.set('table', function (v, path) {
    var e = elem('div', 'table', path);
    var cols = Array.isArray(v.columns) ? v.columns.filter(function (c) { return c && typeof c === 'object'; }) : [];
    var grows = cols.map(function (c) { return typeof c.grow === 'number' ? Math.max(1, Math.min(12, Math.floor(c.grow))) : 1; });
    var total = grows.reduce(function (a, b) { return a + b; }, 0) || 1;
    var act = acting, id = elementId(v);
    var cell = function (i, cls, text) {
      var c = el('div', 'cell ' + cls, text);
      c.style.width = (grows[i] / total * 100).toFixed(3) + '%';
      enumClass(c, 'align-', cols[i].align, ALIGNS, 'start');
      return c;
    };
    var head = el('div', 'table-head');
    cols.forEach(function (c, i) {
      var h = cell(i, 'th', str(c.label).toUpperCase());
      h.dataset.path = path + '.columns[' + i + ']';
      head.appendChild(h);
    });
    add(e, head);
    var rows = Array.isArray(v.rows) ? v.rows.filter(function (r) { return r && typeof r === 'object'; }) : [];
    if (!rows.length) add(e, emptyState(v.empty !== undefined && v.empty !== null ? str(v.empty) : 'No rows'));
    rows.forEach(function (r, i) {
      var p = path + '.rows[' + i + ']';
      var tr = el('div', 'table-row');
      tr.dataset.path = p;
      tr.dataset.id = str(r.id);
      if (v.selected !== undefined && v.selected !== null && same(r.id, v.selected)) tr.classList.add('selected');
      var cells = Array.isArray(r.cells) ? r.cells : [];
      cols.forEach(function (c, j) {
        var td = cell(j, j === 0 ? 'td first' : 'td');
        td.dataset.path = p + '.cells[' + j + ']';
        if (j === 0 && toneOf(r.tone) !== 'neutral') add(td, el('span', 'row-dot tone-' + toneOf(r.tone)));
        add(td, el('span', 'cell-text', str(cells[j])));
        tr.appendChild(td);
      });
      if (act && id !== null) live(tr, function () { act(id, 'select', { item: r.id }); });
      e.appendChild(tr);
    });
    return e;
  });

  R.set('keyValue', function (v, path) {
    var e = elem('div', 'keyValue', path);
    (Array.isArray(v.items) ? v.items : []).forEach(function (it, i) {
      it = it && typeof it === 'object' ? it : {};
      var row = el('div', 'kv-row');
      row.dataset.path = path + '.items[' + i + ']';
      var val = el('div', 'kv-value tone-' + toneOf(it.tone), str(it.value));
      if (it.mono === true) val.classList.add('mono');
      add(row, el('div', 'kv-label', str(it.label)), val);
      e.appendChild(row);
    });
    return e;
  });

  R.set('stat', function (v, path) {
    var e = elem('div', 'stat', path);
    var tone = toneOf(v.tone);
    e.classList.add('tone-' + tone);
    var head = el('div', 'stat-head');
    if (v.icon !== undefined && v.icon !== null) head.appendChild(icon(v.icon));
    add(head, el('span', 'stat-label', str(v.label).toUpperCase()));
    add(e, head, el('div', 'stat-value', str(v.value)));
    if (v.detail !== undefined && v.detail !== null) add(e, el('div', 'stat-detail', str(v.detail)));
    return e;
  });

  R.set('progress', function (v, path) {
    var e = elem('div', 'progress', path);
    e.classList.add('tone-' + toneOf(v.tone));
    var value = typeof v.value === 'number' && isFinite(v.value) ? Math.max(0, Math.min(1, v.value)) : 0;
    var head = el('div', 'progress-head');
    add(head, el('span', 'label', v.label === undefined || v.label === null ? '' : str(v.label)));
    // The detail takes the percentage's place.
    add(head, el('span', 'pct', v.detail !== undefined && v.detail !== null ? str(v.detail) : Math.round(value * 100) + '%'));
    var fill = el('div', 'fill');
    fill.style.width = (value * 100).toFixed(1) + '%';
    add(e, head, add(el('div', 'bar'), fill));
    return e;
  });

  var TONE_ICONS = { neutral: 'lightbulb', info: 'info', success: 'circle-check', warning: 'shield-alert', error: 'circle-x' };

  R.set('callout', function (v, path) {
    var e = elem('div', 'callout', path);
    var tone = v.tone === undefined ? 'info' : toneOf(v.tone);
    e.classList.add('tone-' + tone);
    add(e, icon(v.icon !== undefined && v.icon !== null ? v.icon : TONE_ICONS[tone]));
    var body = el('div', 'callout-body');
    if (v.title !== undefined && v.title !== null) add(body, el('div', 'callout-title', str(v.title)));
    add(body, el('div', 'callout-text', str(v.text)));
    return add(e, body);
  });

  R.set('select', function (v, path) {
    var e = elem('div', 'select', path);
    e.__v = v;
    var options = optionList(v.options);
    var value = v.value === undefined ? '' : v.value;
    var current = options.filter(function (o) { return same(o.value, value); })[0];
    var trig = el('button', 'select-trigger');
    trig.type = 'button';
    add(trig, el('span', 'select-label' + (current ? '' : ' unset'), current ? str(current.label) : (v.placeholder !== undefined && v.placeholder !== null ? str(v.placeholder) : 'Choose…')), icon('chevron-down'));
    var act = acting, id = elementId(v);
    if (v.disabled === true) {
      trig.disabled = true;
      e.classList.add('disabled');
      return add(e, trig);
    }
    return add(e, menuOf(trig, options.map(function (o) {
      return {
        label: str(o.label) + (same(o.value, value) ? ' ✓' : ''), value: str(o.value),
        send: function () { act(id, 'change', { value: o.value }); }
      };
    }), false));
  });

  R.set('checkbox', function (v, path) {
    var e = elem('div', 'checkbox', path);
    var on = v.value === true;
    var box = el('span', 'box ' + (on ? 'on' : 'off'));
    if (on) box.appendChild(icon('check'));
    var text = add(el('div', 'checkbox-text'), el('div', 'label', str(v.label)));
    if (v.description !== undefined && v.description !== null) add(text, el('div', 'description', str(v.description)));
    add(e, box, text);
    var act = acting, id = elementId(v);
    if (v.disabled === true) e.classList.add('disabled');
    else if (act && id !== null) live(e, function () { act(id, 'change', { value: !on }); });
    return e;
  });

  R.set('code', function (v, path) {
    var e = elem('figure', 'code', path);
    var caption = v.title !== undefined && v.title !== null ? v.title : v.language;
    var copy = el('button', 'btn icon-only ghost code-copy');
    copy.type = 'button';
    copy.appendChild(icon('copy'));
    copy.title = 'Copy';
    var text = str(v.text);
    copy.addEventListener('click', function (ev) {
      ev.stopPropagation();
      if (navigator.clipboard) navigator.clipboard.writeText(text).catch(function () {});
      if (typeof window.tapedeckHostToast === 'function') window.tapedeckHostToast('Copied');
    });
    if (caption !== undefined && caption !== null) add(e, add(el('figcaption', ''), el('span', 'code-caption', str(caption)), copy));
    else add(e, add(el('div', 'code-corner'), copy));
    var pre = el('pre', '', text);
    if (typeof v.language === 'string') pre.dataset.language = v.language;
    return add(e, pre);
  });

  R.set('flow', function (v, path) {
    var e = elem('div', 'flow', path);
    var steps = Array.isArray(v.steps) ? v.steps.filter(function (s) { return s && typeof s === 'object'; }) : [];
    var act = acting, id = elementId(v);
    var insertMenu = optionList(v.insertMenu);
    var stateOf = function (s) { return typeof s.state === 'string' && FLOW_STATES.indexOf(s.state) >= 0 ? s.state : 'on'; };
    var gap = function (after, lit, last) {
      var g = el('div', 'flow-gap' + (lit ? ' lit' : '') + (insertMenu.length ? ' insert' : '') + (last ? ' last' : ''));
      add(g, el('span', 'flow-line'));
      if (insertMenu.length) {
        var b = el('button', 'flow-insert');
        b.type = 'button';
        add(b, icon('plus'), el('span', '', 'Add block'));
        b.dataset.after = str(after.id);
        add(g, add(el('div', 'flow-insert-bar'), el('span', 'rule'), menuOf(b, insertMenu.map(function (o) {
          return { label: str(o.label), value: str(o.value), send: function () { act(id, 'insert', { value: o.value, item: after.id }); } };
        }), false), el('span', 'rule')));
      }
      return g;
    };
    var dragged = null;
    steps.forEach(function (s, i) {
      var st = stateOf(s);
      if (i > 0) e.appendChild(gap(steps[i - 1], st !== 'off' && stateOf(steps[i - 1]) !== 'off', false));
      var card = el('div', 'flow-step state-' + st);
      card.dataset.path = path + '.steps[' + i + ']';
      card.dataset.id = str(s.id);
      card.title = card.dataset.path + ' · flow step';
      if (s.selected === true) card.classList.add('selected');
      if (s.side === true) card.classList.add('side');
      add(card, iconTile(s.icon, 'step-icon state-' + st));
      var t = add(el('div', 'step-text'), el('div', 'step-title', str(s.title)));
      if (s.subtitle !== undefined && s.subtitle !== null) add(t, el('div', 'step-subtitle', str(s.subtitle)));
      add(card, t);
      if (st === 'active') add(card, el('span', 'dot-spinner'));
      else add(card, icon(st === 'error' ? 'circle-x' : 'chevron-right'));
      if (act && id !== null) {
        live(card, function () {
          if (card.dataset.dragging === 'moved') return;
          act(id, 'select', { item: s.id });
        });
        if (v.reorderable === true) {
          card.classList.add('reorderable');
          // Dragged onto another step: move, the dragged step as item and
          // the one it was dropped on as value (the host sends no typing first).
          card.addEventListener('mousedown', function (ev) {
            if (ev.button !== 0) return;
            dragged = { step: s, x: ev.clientX, y: ev.clientY, moved: false };
            card.dataset.dragging = '';
          });
          card.addEventListener('mousemove', function (ev) {
            if (dragged && dragged.step === s && Math.abs(ev.clientY - dragged.y) + Math.abs(ev.clientX - dragged.x) > 4) dragged.moved = true;
          });
          card.addEventListener('mouseup', function () {
            var d = dragged;
            dragged = null;
            if (!d) return;
            if (d.step !== s) {
              card.dataset.dragging = 'moved';
              setTimeout(function () { card.dataset.dragging = ''; }, 0);
              act(id, 'move', { value: s.id, item: d.step.id, flush: false });
            }
          });
          card.addEventListener('mouseenter', function () { if (dragged && dragged.step !== s) card.classList.add('drop-target'); });
          card.addEventListener('mouseleave', function () { card.classList.remove('drop-target'); });
        }
      }
      e.appendChild(card);
    });
    if (steps.length && insertMenu.length) e.appendChild(gap(steps[steps.length - 1], false, true));
    return e;
  });

  // The host draws a popover beside the panel (drawPopover), not in it.
  R.set('popover', function (v, path) {
    var e = elem('div', 'popover', path);
    e.hidden = true;
    return e;
  });

  // drawPopover draws a popover as the host does: a card at the panel's
  // right edge with its title and a close button (close).
  function drawPopover(v, path) {
    var c = el('div', 'popover-card');
    c.dataset.path = path;
    c.dataset.type = 'popover';
    if (typeof v.id === 'string') c.dataset.id = v.id;
    var x = el('button', 'btn icon-only ghost popover-close');
    x.type = 'button';
    x.appendChild(icon('x'));
    x.title = path + ' · close';
    var act = acting, id = elementId(v);
    if (act && id !== null) live(x, function () { act(id, 'close', {}); });
    add(c, add(el('div', 'popover-head'), el('span', 'popover-title', str(v.title)), x));
    return add(c, children(el('div', 'popover-body'), v, path, 0));
  }

  // firstPopover finds the popover the host shows: the first one, depth
  // first, through the containers' children.
  function firstPopover(v, path) {
    if (!v || typeof v !== 'object') return null;
    if (v.type === 'popover') return { v: v, path: path };
    if (['column', 'row', 'section', 'card', 'grid', 'tabs', 'popover'].indexOf(v.type) < 0 || !Array.isArray(v.children)) return null;
    for (var i = 0; i < v.children.length; i++) {
      var f = firstPopover(v.children[i], path + '.children[' + i + ']');
      if (f) return f;
    }
    return null;
  }

  // later than API 4

  R.set('image', function (v, path) {
    var e = elem('figure', 'image', path);
    var src = str(first(v, ['src', 'url', 'data']));
    var alt = str(first(v, ['alt', 'title', 'caption']));
    if (/^data:image\//i.test(src)) {
      var img = el('img');
      img.alt = alt;
      img.src = src; // a data: URL only: a report loads nothing from the network
      if (typeof v.width === 'number') img.width = v.width;
      if (typeof v.height === 'number') img.height = v.height;
      add(e, img);
    } else {
      add(e, add(el('div', 'image-placeholder'), el('span', 'icon', '▨'), el('span', '', alt || 'image'), el('div', 'muted', cut(src, 120) + ' (not loaded: the report loads nothing from the network)')));
    }
    if (v.caption !== undefined) add(e, el('figcaption', '', str(v.caption)));
    return extras(e, v, ['src', 'url', 'data', 'alt', 'title', 'caption', 'width', 'height']);
  });

  function seriesOf(v) {
    var s = first(v, ['values', 'data', 'points']);
    if (!Array.isArray(s) && Array.isArray(v.series) && v.series.length && v.series[0]) s = first(v.series[0], ['values', 'data', 'points']);
    if (!Array.isArray(s)) return null;
    var ys = s.map(function (p) { return typeof p === 'number' ? p : (p && typeof p === 'object' ? first(p, ['y', 'value']) : NaN); });
    return ys.every(function (y) { return typeof y === 'number' && isFinite(y); }) && ys.length ? ys : null;
  }

  R.set('graph', function (v, path) {
    var e = elem('figure', 'graph', path);
    var title = first(v, ['title', 'label']);
    if (title !== undefined) add(e, el('figcaption', '', str(title)));
    var ys = seriesOf(v);
    if (ys) {
      var NS = 'http://www.w3.org/2000/svg';
      var w = 240, h = 80, lo = Math.min.apply(null, ys.concat([0])), hi = Math.max.apply(null, ys.concat([0]));
      var span = hi - lo || 1;
      var svg = document.createElementNS(NS, 'svg');
      svg.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
      svg.setAttribute('class', 'chart');
      var bars = str(first(v, ['kind', 'chart', 'variant'])) === 'bar';
      if (bars) {
        var bw = w / ys.length;
        ys.forEach(function (y, i) {
          var r = document.createElementNS(NS, 'rect');
          var top = h - ((Math.max(y, 0) - lo) / span) * h;
          var bottom = h - ((Math.min(y, 0) - lo) / span) * h;
          r.setAttribute('x', String(i * bw + 1));
          r.setAttribute('width', String(Math.max(bw - 2, 1)));
          r.setAttribute('y', String(top));
          r.setAttribute('height', String(Math.max(bottom - top, 1)));
          svg.appendChild(r);
        });
      } else {
        var pts = ys.map(function (y, i) {
          return ((ys.length > 1 ? i / (ys.length - 1) : 0.5) * w).toFixed(1) + ',' + (h - ((y - lo) / span) * h).toFixed(1);
        });
        var pl = document.createElementNS(NS, 'polyline');
        pl.setAttribute('points', pts.join(' '));
        svg.appendChild(pl);
      }
      e.appendChild(svg);
      add(e, el('div', 'muted', ys.length + ' values, ' + lo + ' … ' + hi));
    } else {
      add(e, el('div', 'muted', 'no values to chart'));
    }
    return extras(e, v, ['title', 'label', 'values', 'data', 'points', 'series', 'kind', 'chart', 'variant', 'nodes', 'steps', 'items', 'edges', 'links', 'connections']);
  });

  function renderNode(v, path, depth) {
    if (depth > MAX_DEPTH) return placeholder(path, 'nested too deep to draw here');
    if (!v || typeof v !== 'object' || Array.isArray(v)) return placeholder(path, 'not an element: ' + cut(JSON.stringify(v) || String(v), 60), 'unknown');
    var t = v.type;
    var r = typeof t === 'string' ? R.get(t) : undefined;
    var e;
    if (!r) {
      e = el('div', 'el el-unknown unknown');
      e.dataset.path = path;
      e.dataset.type = typeof t === 'string' ? t : '';
      e.title = path;
      add(e, el('div', 'unknown-label', t === undefined ? 'element without a type' : 'unknown element type ' + (typeof t === 'string' ? t : JSON.stringify(t))));
      if (Array.isArray(v.children)) children(e, v, path, depth);
    } else {
      e = r(v, path, depth);
      if (Object.prototype.hasOwnProperty.call(FIELDS, t)) extras(e, v, FIELDS[t]);
    }
    if (typeof v.id === 'string') e.dataset.id = v.id;
    return e;
  }

  // drawPanel draws a ui/setPanel tree the way the host shows it. With
  // act, the panel is live and its controls send what the host sends
  // (docs/agentty-elements.md): act(element, event, extra). An input's
  // keystrokes go to act as event "type" (the page sends change the host's
  // way, after a pause); extra.flush false marks the events the host sends
  // without first sending typing it has not sent. The tree's first popover
  // is drawn as the host does, beside the panel: the returned element's
  // popoverCard (also appended to it for a page that leaves it there).
  function drawPanel(tree, act) {
    var p = el('div', 'panel');
    p.popoverCard = null;
    if (act) p.classList.add('live');
    if (tree === undefined) {
      add(p, placeholder('tree', 'this ui/setPanel has no tree', 'unknown'));
      return p;
    }
    acting = act || null;
    try {
      p.appendChild(renderNode(tree, 'tree', 0));
      var pop = firstPopover(tree, 'tree');
      if (pop) {
        p.popoverCard = drawPopover(pop.v, pop.path);
        p.appendChild(p.popoverCard);
      }
    } finally {
      acting = null;
    }
    return p;
  }

  // drawBadge draws the plugin's badge (ui/setBadge) as the host shows it:
  // cut to 8 characters.
  function drawBadge(text) {
    var s = str(text);
    var b = el('span', 'plugin-badge', Array.from(s).slice(0, 8).join(''));
    b.title = 'ui/setBadge ' + JSON.stringify(s) + (Array.from(s).length > 8 ? ' (the host shows 8 characters)' : '');
    return b;
  }

  var KINDS = ['info', 'success', 'warning', 'error'];

  // drawToast draws one ui/notify as a toast; a dropped one (the host's
  // 700 ms rule, as check finds it) is drawn struck through and says so.
  function drawToast(params, dropped, name) {
    var p = params && typeof params === 'object' ? params : {};
    var t = el('div', 'toast');
    enumClass(t, 'kind-', p.kind, KINDS, 'info');
    // The host shows "Plugin name: message", the message cut at 300
    // characters, whatever the kind, with a check mark.
    var msg = Array.from(str(p.message)).slice(0, 300).join('');
    var text = el('div', 'toast-text');
    add(text, el('span', 'toast-message', visible((name ? name + ': ' : '') + msg)));
    add(t, icon('circle-check'), text);
    if (dropped) {
      t.classList.add('dropped');
      add(text, el('span', 'toast-dropped', 'dropped by the host: within 700 ms of the last one shown'));
    }
    return t;
  }

  // outline marks, for each changed path, the deepest drawn node whose
  // data-path it falls under.
  function outline(panel, paths) {
    var nodes = panel.querySelectorAll('[data-path]');
    (paths || []).forEach(function (p) {
      var best = null;
      for (var i = 0; i < nodes.length; i++) {
        var d = nodes[i].dataset.path;
        if ((p === d || p.indexOf(d + '.') === 0 || p.indexOf(d + '[') === 0) && (!best || d.length > best.dataset.path.length)) best = nodes[i];
      }
      if (best) best.classList.add('outline');
    });
  }

  function parseLine(f) {
    var s = f.u !== undefined ? f.u : f.r;
    try {
      return JSON.parse(s);
    } catch (e) {
      return undefined;
    }
  }

  function treeOf(f) {
    var m = parseLine(f);
    return m && m.params && typeof m.params === 'object' ? m.params.tree : undefined;
  }

  // ---------- frames ----------

  function isCall(f, method) {
    return f.d === 'out' && (f.k === 'request' || f.k === 'notification') && f.m === method;
  }

  function isSetPanel(f) {
    return f.d === 'out' && (f.k === 'request' || f.k === 'notification') && f.m === 'ui/setPanel';
  }

  // summary is a frame's one-line summary: params, result or error.
  function summary(f) {
    if (f.k === 'event') return f.e || '';
    if (f.k === 'stderr') return visible(cut(f.r || '', 400));
    if (f.k === 'blank') return '(blank line)';
    if (f.k === 'stray') return (f.x || 'stray') + ': ' + visible(cut(f.r || '', 400));
    var r = f.u !== undefined ? f.u : f.r;
    if (!r || r.length > 200000) return visible(cut(r || '', 400));
    var m;
    try {
      m = JSON.parse(r);
    } catch (e) {
      return visible(cut(r, 400));
    }
    var v;
    if (f.k === 'error' && m.error && typeof m.error === 'object') {
      v = 'error ' + str(m.error.code) + ': ' + str(m.error.message);
      if (m.error.data !== undefined) v += ' ' + JSON.stringify(m.error.data);
      return visible(cut(v, 400));
    }
    v = f.k === 'response' || f.k === 'error' ? m.result : m.params;
    return v === undefined ? '' : visible(cut(JSON.stringify(v), 400));
  }

  function prettyOf(f) {
    if (f.k === 'event') return f.e;
    var s = f.r || '';
    if (f.j && s.length <= PRETTY_MAX) return indentJSON(f.u !== undefined ? f.u : s);
    return visible(s);
  }

