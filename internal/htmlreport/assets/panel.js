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

  var GAPS = ['none', 'small', 'medium', 'large'];
  var STYLES = ['body', 'title', 'muted', 'small', 'code', 'error', 'success'];
  var VARIANTS = ['primary', 'secondary', 'ghost', 'danger'];
  var TONES = ['neutral', 'info', 'success', 'warning', 'error'];
  var MAX_DEPTH = 48;

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

  function elem(tag, type, path, cls) {
    var e = el(tag, 'el el-' + type + (cls ? ' ' + cls : ''));
    e.dataset.type = type;
    e.dataset.path = path;
    e.title = path + ' · ' + type;
    return e;
  }

  var ICONS = {
    play: '▶', stop: '■', pause: '‖', add: '+', plus: '+', remove: '−', minus: '−', trash: '⌦', delete: '⌦',
    close: '✕', x: '✕', check: '✓', ok: '✓', edit: '✎', pencil: '✎', search: '⌕', refresh: '↻', reload: '↻',
    sync: '↻', star: '★', heart: '♥', info: 'ℹ', warning: '⚠', alert: '⚠', error: '⊘', gear: '⚙', settings: '⚙',
    folder: '▰', file: '▤', link: '∞', copy: '⧉', send: '➤', arrow: '→', 'arrow-right': '→', 'arrow-left': '←',
    up: '↑', down: '↓', user: '☺', terminal: '⌨', bell: '♪', clock: '◷', home: '⌂', menu: '☰', more: '⋯'
  };

  function icon(name, tone) {
    var i = el('span', 'icon');
    var s = str(name);
    i.textContent = Object.prototype.hasOwnProperty.call(ICONS, s) ? ICONS[s] : '◆';
    i.title = 'icon ' + s;
    if (tone !== undefined) enumClass(i, 'tone-', tone, TONES, null);
    return i;
  }

  function placeholder(path, what, cls) {
    var e = el('div', 'el el-placeholder ' + (cls || ''), what);
    e.dataset.path = path;
    e.title = path;
    return e;
  }

  function children(parent, v, path, depth, member) {
    member = member || 'children';
    var c = v[member];
    if (Array.isArray(c)) {
      for (var i = 0; i < c.length; i++) parent.appendChild(renderNode(c[i], path + '.' + member + '[' + i + ']', depth + 1));
    } else if (c !== undefined && c !== null) {
      if (typeof c === 'object' && typeof c.type === 'string') parent.appendChild(renderNode(c, path + '.' + member, depth + 1));
      else parent.appendChild(placeholder(path + '.' + member, member + ' is not a list of elements'));
    }
    return parent;
  }

  // extras lists the members an element type of API 4 and later has that
  // this page does not draw: their shapes are not documented, so nothing
  // the plugin sent is hidden.
  function extras(e, v, known) {
    var box = null;
    Object.keys(v).forEach(function (k) {
      if (k === 'type' || k === 'id' || known.indexOf(k) >= 0) return;
      if (!box) box = el('div', 'extras');
      var x = v[k];
      var shown = Array.isArray(x) ? '[' + x.length + ' entries]' : (x && typeof x === 'object' ? '{…}' : str(x));
      add(box, add(el('span', 'extra'), el('span', 'extra-k', k), el('span', 'extra-v', cut(shown, 80))));
    });
    if (box) e.appendChild(box);
    return e;
  }

  function options(v) {
    var o = first(v, ['options', 'items', 'choices']);
    return Array.isArray(o) ? o : [];
  }

  function optionLabel(o) {
    if (o && typeof o === 'object') return str(first(o, ['label', 'title', 'text', 'value']));
    return str(o);
  }

  function optionValue(o) {
    return o && typeof o === 'object' ? o.value : o;
  }

  function same(a, b) {
    return a === b || (a !== undefined && JSON.stringify(a) === JSON.stringify(b));
  }

  var R = new Map();

  // acting is the live panel's event sink while drawPanel draws one, null
  // for a drawn-only panel (the report): act(element, event, extra) with
  // extra holding value, item or action, as the host's ui/event has them.
  var acting = null;

  function elementId(v) {
    return typeof v.id === 'string' ? v.id : null;
  }

  // API 1

  R.set('column', function (v, path, depth) {
    var e = elem('div', 'column', path);
    enumClass(e, 'gap-', v.gap, GAPS, 'default');
    return children(e, v, path, depth);
  });

  R.set('row', function (v, path, depth) {
    var e = elem('div', 'row', path);
    enumClass(e, 'gap-', v.gap, GAPS, 'default');
    if (v.wrap === true) e.classList.add('wrap');
    return children(e, v, path, depth);
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
    if (v.icon !== undefined) e.appendChild(icon(v.icon));
    add(e, el('span', 'label', str(v.label)));
    if (v.disabled === true) {
      e.disabled = true;
      e.classList.add('disabled');
    }
    var act = acting, id = elementId(v);
    if (act && id !== null) e.addEventListener('click', function () { act(id, 'click', {}); });
    return e;
  });

  R.set('input', function (v, path) {
    var e = elem('div', 'input', path);
    var i = el('input', 'field');
    i.type = 'text';
    var act = acting, id = elementId(v);
    i.readOnly = !act || id === null;
    if (v.placeholder !== undefined) i.placeholder = str(v.placeholder);
    if (v.value !== undefined) i.value = str(v.value);
    if (!i.readOnly) {
      i.dataset.id = id;
      i.addEventListener('input', function () { act(id, 'change', { value: i.value }); });
      i.addEventListener('keydown', function (ev) {
        if (ev.key === 'Enter') act(id, 'submit', { value: i.value });
      });
    }
    return add(e, i);
  });

  R.set('list', function (v, path, depth) {
    var e = elem('div', 'list', path);
    var items = Array.isArray(v.items) ? v.items : [];
    if (!Array.isArray(v.items)) e.appendChild(placeholder(path + '.items', 'items is not a list'));
    if (items.length === 0) add(e, el('div', 'list-empty', v.empty !== undefined ? str(v.empty) : 'Nothing here'));
    var act = acting, listId = elementId(v);
    if (listId === null) act = null;
    items.forEach(function (it, i) {
      var p = path + '.items[' + i + ']';
      var row = el('div', 'item');
      row.dataset.path = p;
      row.title = p + ' · list item';
      if (!it || typeof it !== 'object') {
        add(row, el('span', 'item-title', str(it)));
        e.appendChild(row);
        return;
      }
      if (typeof it.id === 'string') row.dataset.id = it.id;
      if (act && typeof it.id === 'string') {
        row.classList.add('live');
        row.addEventListener('click', function () { act(listId, 'select', { item: it.id }); });
      }
      if (it.icon !== undefined) row.appendChild(icon(it.icon, it.tone === undefined ? 'neutral' : it.tone));
      else if (it.tone !== undefined) add(row, (function () { var d = el('span', 'dot'); enumClass(d, 'tone-', it.tone, TONES, null); return d; })());
      var main = add(el('div', 'item-main'), el('div', 'item-title', str(it.title)));
      if (it.subtitle !== undefined) add(main, el('div', 'item-subtitle', str(it.subtitle)));
      add(row, main);
      if (it.detail !== undefined) add(row, el('div', 'item-detail', str(it.detail)));
      if (Array.isArray(it.actions) && it.actions.length) {
        var acts = el('div', 'item-actions');
        it.actions.forEach(function (a, j) {
          var b = el('button', 'btn action variant-ghost');
          b.type = 'button';
          b.dataset.path = p + '.actions[' + j + ']';
          a = a || {};
          if (a.icon !== undefined) b.appendChild(icon(a.icon));
          if (a.label !== undefined) add(b, el('span', 'label', str(a.label)));
          if (a.icon === undefined && a.label === undefined) add(b, el('span', 'label', str(a.id)));
          b.title = a.tooltip !== undefined ? str(a.tooltip) : b.dataset.path;
          if (act && typeof it.id === 'string' && typeof a.id === 'string') {
            var action = a.id;
            b.dataset.action = action;
            b.addEventListener('click', function (ev) {
              ev.stopPropagation();
              act(listId, 'action', { item: it.id, action: action });
            });
          }
          acts.appendChild(b);
        });
        add(row, acts);
      }
      e.appendChild(row);
    });
    return e;
  });

  R.set('choice', function (v, path) {
    var e = elem('div', 'choice', path);
    var act = acting, id = elementId(v);
    options(v).forEach(function (o, i) {
      var b = el('span', 'option', optionLabel(o));
      b.dataset.path = path + '.options[' + i + ']';
      if (v.value !== undefined && same(optionValue(o), v.value)) b.classList.add('selected');
      if (act && id !== null) {
        b.classList.add('live');
        b.tabIndex = 0;
        b.setAttribute('role', 'button');
        b.addEventListener('click', function () {
          Array.prototype.forEach.call(e.children, function (x) { x.classList.remove('selected'); });
          b.classList.add('selected');
          act(id, 'change', { value: optionValue(o) });
        });
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
      e.classList.add('live');
      e.tabIndex = 0;
      e.setAttribute('role', 'switch');
      e.addEventListener('click', function () {
        on = !on;
        sw.className = 'switch ' + (on ? 'on' : 'off');
        act(id, 'change', { value: on });
      });
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
    add(e, el('span', 'spin'));
    if (v.text !== undefined) add(e, el('span', 'label', str(v.text)));
    return e;
  });

  R.set('divider', function (v, path) {
    return elem('hr', 'divider', path);
  });

  // API 4

  R.set('card', function (v, path, depth) {
    var e = elem('div', 'card', path);
    if (v.tone !== undefined) enumClass(e, 'tone-', v.tone, TONES, null);
    var title = first(v, ['title', 'heading']);
    var sub = first(v, ['subtitle', 'description']);
    if (title !== undefined || sub !== undefined || v.icon !== undefined) {
      var h = el('div', 'card-head');
      if (v.icon !== undefined) h.appendChild(icon(v.icon));
      var t = el('div', 'card-titles');
      if (title !== undefined) add(t, el('div', 'card-title', str(title)));
      if (sub !== undefined) add(t, el('div', 'card-subtitle', str(sub)));
      add(e, add(h, t));
    }
    var body = el('div', 'card-body');
    enumClass(body, 'gap-', v.gap, GAPS, 'default');
    if (v.text !== undefined) add(body, el('div', 'text style-body', str(v.text)));
    children(body, v, path, depth);
    if (v.footer !== undefined) children(body, v, path, depth, 'footer');
    add(e, body);
    return extras(e, v, ['title', 'heading', 'subtitle', 'description', 'icon', 'tone', 'gap', 'text', 'children', 'footer']);
  });

  R.set('grid', function (v, path, depth) {
    var e = elem('div', 'grid', path);
    enumClass(e, 'gap-', v.gap, GAPS, 'default');
    var cols = v.columns;
    if (Array.isArray(cols)) cols = cols.length;
    if (typeof cols === 'number' && cols >= 1) e.style.gridTemplateColumns = 'repeat(' + Math.min(Math.floor(cols), 12) + ', minmax(0, 1fr))';
    children(e, v, path, depth);
    return extras(e, v, ['columns', 'gap', 'children']);
  });

  R.set('tabs', function (v, path, depth) {
    var e = elem('div', 'tabs', path);
    var member = Array.isArray(v.tabs) ? 'tabs' : 'items';
    var tabs = Array.isArray(v[member]) ? v[member] : [];
    var active = first(v, ['value', 'selected', 'active']);
    if (active === undefined && tabs.length && tabs[0] && typeof tabs[0] === 'object') active = first(tabs[0], ['id', 'value']);
    var bar = el('div', 'tab-bar');
    var bodies = el('div', 'tab-bodies');
    tabs.forEach(function (t, i) {
      var p = path + '.' + member + '[' + i + ']';
      t = t && typeof t === 'object' ? t : { label: t };
      var id = first(t, ['id', 'value']);
      var b = el('button', 'tab', str(first(t, ['label', 'title', 'id', 'value'])));
      b.type = 'button';
      b.dataset.path = p;
      b.title = p + ' · tab';
      var body = el('div', 'tab-body');
      body.dataset.path = p + '.content';
      if (Array.isArray(t.children)) children(body, t, p, depth);
      else if (t.content !== undefined) children(body, t, p, depth, 'content');
      var on = same(id, active);
      b.classList.toggle('active', on);
      body.hidden = !on;
      b.addEventListener('click', function () {
        Array.prototype.forEach.call(bar.children, function (x) { x.classList.remove('active'); });
        Array.prototype.forEach.call(bodies.children, function (x) { x.hidden = true; });
        b.classList.add('active');
        body.hidden = false;
      });
      bar.appendChild(b);
      bodies.appendChild(body);
    });
    add(e, bar, bodies);
    children(e, v, path, depth);
    return extras(e, v, ['tabs', 'items', 'value', 'selected', 'active', 'children']);
  });

  R.set('table', function (v, path, depth) {
    var e = elem('div', 'table', path);
    var t = el('table', 'grid-table');
    var cols = Array.isArray(v.columns) ? v.columns : (Array.isArray(v.headers) ? v.headers : []);
    var keys = cols.map(function (c) { return c && typeof c === 'object' ? first(c, ['key', 'id', 'field', 'name']) : c; });
    if (cols.length) {
      var tr = el('tr');
      cols.forEach(function (c, i) {
        var th = el('th', '', c && typeof c === 'object' ? str(first(c, ['label', 'title', 'header', 'name', 'key', 'id'])) : str(c));
        th.dataset.path = path + '.columns[' + i + ']';
        tr.appendChild(th);
      });
      add(t, add(el('thead'), tr));
    }
    var member = Array.isArray(v.rows) ? 'rows' : (Array.isArray(v.data) ? 'data' : 'items');
    var rows = Array.isArray(v[member]) ? v[member] : [];
    var tb = el('tbody');
    rows.forEach(function (r, i) {
      var p = path + '.' + member + '[' + i + ']';
      var tr = el('tr');
      tr.dataset.path = p;
      var cells;
      var cellPath;
      if (Array.isArray(r)) {
        cells = r;
        cellPath = function (j) { return p + '[' + j + ']'; };
      } else if (r && typeof r === 'object' && Array.isArray(r.cells)) {
        cells = r.cells;
        cellPath = function (j) { return p + '.cells[' + j + ']'; };
      } else if (r && typeof r === 'object') {
        var ks = keys.length ? keys : Object.keys(r);
        cells = ks.map(function (k) { return r[str(k)]; });
        cellPath = function (j) { return p + '.' + str(ks[j]); };
      } else {
        cells = [r];
        cellPath = function () { return p; };
      }
      cells.forEach(function (c, j) {
        var td = el('td');
        td.dataset.path = cellPath(j);
        if (c && typeof c === 'object' && typeof c.type === 'string') td.appendChild(renderNode(c, cellPath(j), depth + 1));
        else td.textContent = str(c);
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    });
    add(t, tb);
    if (!rows.length) add(e, el('div', 'list-empty', v.empty !== undefined ? str(v.empty) : 'No rows'));
    add(e, t);
    return extras(e, v, ['columns', 'headers', 'rows', 'data', 'items', 'empty']);
  });

  R.set('keyValue', function (v, path) {
    var e = elem('dl', 'keyValue', path);
    var member = ['items', 'pairs', 'entries', 'rows'].filter(function (m) { return Array.isArray(v[m]); })[0];
    var entries;
    if (member) {
      entries = v[member].map(function (it, i) {
        it = it && typeof it === 'object' ? it : { value: it };
        return { k: first(it, ['key', 'label', 'name', 'term', 'title']), v: first(it, ['value', 'text', 'detail', 'description']), tone: it.tone, p: path + '.' + member + '[' + i + ']' };
      });
    } else if (v.data && typeof v.data === 'object' && !Array.isArray(v.data)) {
      entries = Object.keys(v.data).map(function (k) { return { k: k, v: v.data[k], p: path + '.data.' + k }; });
    } else {
      entries = [];
    }
    entries.forEach(function (x) {
      var dt = el('dt', '', str(x.k));
      var dd = el('dd', '', str(x.v));
      dt.dataset.path = x.p;
      dd.dataset.path = x.p + '.value';
      if (x.tone !== undefined) enumClass(dd, 'tone-', x.tone, TONES, null);
      add(e, dt, dd);
    });
    return extras(e, v, ['items', 'pairs', 'entries', 'rows', 'data']);
  });

  R.set('stat', function (v, path) {
    var e = elem('div', 'stat', path);
    if (v.tone !== undefined) enumClass(e, 'tone-', v.tone, TONES, null);
    var label = first(v, ['label', 'title', 'name']);
    if (label !== undefined) add(e, el('div', 'stat-label', str(label)));
    var val = add(el('div', 'stat-value'), el('span', 'value', str(v.value)));
    if (v.unit !== undefined) add(val, el('span', 'unit', str(v.unit)));
    add(e, val);
    var delta = first(v, ['delta', 'change', 'trend']);
    if (delta !== undefined) {
      var d = el('div', 'stat-delta', str(delta));
      var n = typeof delta === 'number' ? delta : parseFloat(str(delta));
      if (n > 0) d.classList.add('up');
      if (n < 0) d.classList.add('down');
      add(e, d);
    }
    var cap = first(v, ['caption', 'detail', 'description', 'help', 'subtitle']);
    if (cap !== undefined) add(e, el('div', 'stat-caption', str(cap)));
    return extras(e, v, ['label', 'title', 'name', 'value', 'unit', 'delta', 'change', 'trend', 'tone', 'caption', 'detail', 'description', 'help', 'subtitle']);
  });

  R.set('progress', function (v, path) {
    var e = elem('div', 'progress', path);
    enumClass(e, 'tone-', v.tone, TONES, 'info');
    var label = first(v, ['label', 'text', 'title']);
    var frac = null;
    if (typeof v.value === 'number') {
      if (typeof v.max === 'number' && v.max > 0) frac = v.value / v.max;
      else frac = v.value <= 1 ? v.value : v.value / 100;
      frac = Math.max(0, Math.min(1, frac));
    }
    var head = el('div', 'progress-head');
    if (label !== undefined) add(head, el('span', 'label', str(label)));
    add(head, el('span', 'pct', frac === null ? 'indeterminate' : Math.round(frac * 100) + '%'));
    var bar = el('div', 'bar');
    var fill = el('div', 'fill' + (frac === null ? ' indeterminate' : ''));
    if (frac !== null) fill.style.width = (frac * 100).toFixed(1) + '%';
    add(e, head, add(bar, fill));
    return extras(e, v, ['label', 'text', 'title', 'value', 'max', 'tone']);
  });

  R.set('callout', function (v, path, depth) {
    var e = elem('div', 'callout', path);
    enumClass(e, 'tone-', first(v, ['tone', 'kind', 'variant']), TONES, 'info');
    if (v.icon !== undefined) add(e, icon(v.icon));
    var body = el('div', 'callout-body');
    if (v.title !== undefined) add(body, el('div', 'callout-title', str(v.title)));
    var t = first(v, ['text', 'message', 'body', 'description']);
    if (t !== undefined) add(body, el('div', 'callout-text', str(t)));
    children(body, v, path, depth);
    add(e, body);
    return extras(e, v, ['tone', 'kind', 'variant', 'icon', 'title', 'text', 'message', 'body', 'description', 'children']);
  });

  R.set('select', function (v, path) {
    var e = elem('div', 'select', path);
    if (v.label !== undefined) add(e, el('label', 'label', str(v.label)));
    var s = el('select', 'field');
    var any = false;
    if (v.placeholder !== undefined) {
      var ph = el('option', 'placeholder', str(v.placeholder));
      ph.value = '';
      add(s, ph);
    }
    options(v).forEach(function (o, i) {
      var op = el('option', '', optionLabel(o));
      op.value = String(i);
      op.dataset.path = path + '.options[' + i + ']';
      if (v.value !== undefined && same(optionValue(o), v.value)) {
        op.selected = true;
        any = true;
      }
      add(s, op);
    });
    if (!any && v.placeholder !== undefined) s.value = '';
    if (v.disabled === true) s.disabled = true;
    add(e, s);
    return extras(e, v, ['label', 'placeholder', 'options', 'items', 'choices', 'value', 'disabled']);
  });

  R.set('checkbox', function (v, path) {
    var e = elem('div', 'checkbox', path);
    var on = v.value === true || v.checked === true;
    add(e, el('span', 'box ' + (on ? 'on' : 'off'), on ? '✓' : ''), el('span', 'label', str(v.label)));
    if (v.disabled === true) e.classList.add('disabled');
    return extras(e, v, ['label', 'value', 'checked', 'disabled']);
  });

  R.set('code', function (v, path) {
    var e = elem('figure', 'code', path);
    var lang = first(v, ['language', 'lang']);
    var title = first(v, ['title', 'filename']);
    if (lang !== undefined || title !== undefined) add(e, el('figcaption', '', [str(title), str(lang)].filter(Boolean).join(' · ')));
    add(e, el('pre', '', str(first(v, ['code', 'text', 'value', 'source', 'content']))));
    return extras(e, v, ['language', 'lang', 'title', 'filename', 'code', 'text', 'value', 'source', 'content']);
  });

  function nodeLabel(n) {
    if (n && typeof n === 'object') return str(first(n, ['label', 'title', 'text', 'name', 'id']));
    return str(n);
  }

  function drawNodes(e, v, path, kind) {
    var member = ['nodes', 'steps', 'items'].filter(function (m) { return Array.isArray(v[m]); })[0];
    var nodes = member ? v[member] : [];
    var edgeMember = ['edges', 'links', 'connections'].filter(function (m) { return Array.isArray(v[m]); })[0];
    var edges = edgeMember ? v[edgeMember] : [];
    var chain = el('div', kind + '-nodes');
    nodes.forEach(function (n, i) {
      if (i > 0 && !edges.length) add(chain, el('span', 'flow-arrow', '→'));
      var c = el('div', 'flow-node', nodeLabel(n));
      c.dataset.path = path + '.' + member + '[' + i + ']';
      c.title = c.dataset.path;
      if (n && typeof n === 'object') {
        var tone = first(n, ['tone', 'status']);
        if (tone !== undefined) enumClass(c, 'tone-', tone, TONES, null);
        var det = first(n, ['detail', 'description', 'subtitle']);
        if (det !== undefined) add(c, el('div', 'flow-detail', str(det)));
      }
      chain.appendChild(c);
    });
    if (!nodes.length) add(chain, el('span', 'list-empty', 'no ' + (member || 'nodes')));
    add(e, chain);
    if (edges.length) {
      var list = el('ul', 'flow-edges');
      edges.forEach(function (x, i) {
        var li = el('li');
        li.dataset.path = path + '.' + edgeMember + '[' + i + ']';
        x = x || {};
        add(li, el('span', '', str(first(x, ['from', 'source']))), el('span', 'flow-arrow', ' → '), el('span', '', str(first(x, ['to', 'target']))));
        if (x.label !== undefined) add(li, el('span', 'muted', '  ' + str(x.label)));
        list.appendChild(li);
      });
      add(e, list);
    }
  }

  R.set('flow', function (v, path) {
    var e = elem('div', 'flow', path);
    if (v.title !== undefined) add(e, el('div', 'section-title', str(v.title)));
    drawNodes(e, v, path, 'flow');
    return extras(e, v, ['title', 'nodes', 'steps', 'items', 'edges', 'links', 'connections', 'direction']);
  });

  R.set('popover', function (v, path, depth) {
    var e = elem('div', 'popover', path);
    var trig = first(v, ['label', 'title', 'trigger', 'text']);
    var b = el('button', 'btn variant-secondary popover-trigger');
    b.type = 'button';
    if (v.icon !== undefined) b.appendChild(icon(v.icon));
    if (trig && typeof trig === 'object' && typeof trig.type === 'string') b.appendChild(renderNode(trig, path + '.trigger', depth + 1));
    else add(b, el('span', 'label', trig === undefined ? 'popover' : str(trig)), el('span', 'caret', ' ▾'));
    var body = el('div', 'popover-body');
    body.dataset.caption = 'popover content';
    children(body, v, path, depth);
    if (v.content !== undefined) children(body, v, path, depth, 'content');
    add(e, b, body);
    return extras(e, v, ['label', 'title', 'trigger', 'text', 'icon', 'children', 'content']);
  });

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
      drawNodes(e, v, path, 'graph');
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
    }
    if (typeof v.id === 'string') e.dataset.id = v.id;
    return e;
  }

  // drawPanel draws a ui/setPanel tree the way the host would show it.
  // drawPanel draws a ui/setPanel tree the way the host would show it.
  // With act, the panel is live: a button sends click; an input change (as
  // it is typed) and submit (Enter), with its value; a list select with
  // the item, and a row's button action with item and action; a choice
  // change with the option's value; a toggle change with the new boolean.
  function drawPanel(tree, act) {
    var p = el('div', 'panel');
    if (act) p.classList.add('live');
    if (tree === undefined) {
      add(p, placeholder('tree', 'this ui/setPanel has no tree', 'unknown'));
      return p;
    }
    acting = act || null;
    try {
      p.appendChild(renderNode(tree, 'tree', 0));
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
  function drawToast(params, dropped) {
    var p = params && typeof params === 'object' ? params : {};
    var t = el('div', 'toast');
    enumClass(t, 'kind-', p.kind, KINDS, 'info');
    add(t, el('span', 'toast-message', visible(str(p.message))));
    if (dropped) {
      t.classList.add('dropped');
      add(t, el('span', 'toast-dropped', 'dropped by the host: within 700 ms of the last one shown'));
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

