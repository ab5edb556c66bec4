// nib console: the page. No build step: this file is served as written.
// The server masks every credential before it sends anything, so nothing
// here needs to; text goes into the page as text (textContent, or escaped
// before innerHTML for the diff's rows).
'use strict';

const TOKEN = document.querySelector('meta[name="nib-token"]').content;
// Measurements the browser test reads: how long after a call its card
// appeared (ms, from the event's time), and how long a diff took to render.
// longTasks: every stretch the page's thread was busy for over 50 ms.
window.nib = { cardDelays: [], diffRenders: [], longTasks: [] };
try {
  new PerformanceObserver(list => {
    for (const e of list.getEntries()) window.nib.longTasks.push(Math.round(e.duration));
  }).observe({entryTypes: ['longtask']});
} catch (_) { /* a browser without long-task timing */ }

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function esc(s) {
  return String(s).replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
}

async function getJson(url) {
  const r = await fetch(url + (url.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(TOKEN));
  const j = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(j.error || ('HTTP ' + r.status));
  return j;
}

async function post(url, body) {
  const r = await fetch(url, {
    method: 'POST',
    headers: {'Content-Type': 'application/json', 'X-Nib-Token': TOKEN},
    body: JSON.stringify(body || {}),
  });
  const j = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(j.error || ('HTTP ' + r.status));
  return j;
}

function setStatus(text) { document.getElementById('status').textContent = text; }

// ---- diffs -------------------------------------------------------------

// A diff is laid out as rows of a grid (not a table: a table lays out
// every row before it shows one), in chunks of CHUNK rows that the browser
// skips while they are off screen (content-visibility), and only the first
// chunks are built at once: the rest follow in batches, so a 10,000-line
// diff never holds the page.
const CHUNK = 200;
// How much of a call's positional form a card shows before "more".
const FORM_SHOWN = 2000;
const FIRST_ROWS = 400;

const signClass = sign => sign === '+' ? 'add' : sign === '-' ? 'del' : 'ctx';
const noteRow = note => '<div class="row note">⚠ ' + esc(note) + '</div>';
const hunkRow = hunk => '<div class="row hunk">' + esc(hunk.h) + '</div>';

// Unified rows: [sign, old, new, text, notes?].
function unifiedRows(hunks) {
  const out = [];
  for (const hunk of hunks) {
    out.push(hunkRow(hunk));
    for (const [sign, o, n, text, notes] of hunk.r) {
      out.push('<div class="row ' + signClass(sign) + '"><span class="ln">' + (o ?? '') + '</span><span class="ln">' +
        (n ?? '') + '</span><span class="sign">' + esc(sign) + '</span><span class="code">' + esc(text) + '</span></div>');
      for (const note of notes || []) out.push(noteRow(note));
    }
  }
  return out;
}

// Side by side: removed rows beside the added rows that follow them.
function splitRows(hunks) {
  const out = [];
  const cell = (row, side) => row
    ? '<span class="ln">' + ((side === 'old' ? row[1] : row[2]) ?? '') + '</span><span class="code ' +
      signClass(row[0]) + '">' + esc(row[3]) + '</span>'
    : '<span class="ln"></span><span class="code empty"></span>';
  for (const hunk of hunks) {
    out.push(hunkRow(hunk));
    const rows = hunk.r;
    let i = 0;
    while (i < rows.length) {
      if (rows[i][0] === '-' || rows[i][0] === '+') {
        const del = [], add = [];
        while (i < rows.length && rows[i][0] === '-') del.push(rows[i++]);
        while (i < rows.length && rows[i][0] === '+') add.push(rows[i++]);
        for (let k = 0; k < Math.max(del.length, add.length); k++) {
          out.push('<div class="row pair">' + cell(del[k], 'old') + cell(add[k], 'new') + '</div>');
          for (const note of (add[k] && add[k][4]) || []) out.push(noteRow(note));
        }
      } else {
        out.push('<div class="row pair">' + cell(rows[i], 'old') + cell(rows[i], 'new') + '</div>');
        i++;
      }
    }
  }
  return out;
}

function appendChunks(grid, rows, from, to) {
  const html = [];
  for (let i = from; i < to; i += CHUNK) {
    html.push('<div class="chunk">' + rows.slice(i, Math.min(i + CHUNK, to)).join('') + '</div>');
  }
  grid.insertAdjacentHTML('beforeend', html.join(''));
}

function diffView(msg) {
  const grid = h('div', {class: 'diff-rows'});
  const wrap = h('div', {class: 'diff'}, grid);
  let split = false;
  let generation = 0;
  const render = () => {
    const t0 = performance.now();
    const mine = ++generation;
    const rows = split ? splitRows(msg.hunks) : unifiedRows(msg.hunks);
    grid.replaceChildren();
    grid.classList.toggle('split', split);
    const first = Math.min(rows.length, FIRST_ROWS);
    appendChunks(grid, rows, 0, first);
    const timing = {rows: msg.rows, split, firstMs: null, allMs: null};
    // The first rows on screen: the next frame after they are in.
    requestAnimationFrame(() => setTimeout(() => { timing.firstMs = Math.round(performance.now() - t0); }, 0));
    let at = first;
    const more = () => {
      if (mine !== generation) return;
      if (at < rows.length) {
        const to = Math.min(rows.length, at + 5 * CHUNK);
        appendChunks(grid, rows, at, to);
        at = to;
        setTimeout(more, 0);
      } else {
        requestAnimationFrame(() => setTimeout(() => {
          timing.allMs = Math.round(performance.now() - t0);
          window.nib.diffRenders.push(timing);
        }, 0));
      }
    };
    setTimeout(more, 0);
  };
  const toggle = h('button', {class: 'toggle', onclick: () => {
    split = !split;
    toggle.textContent = split ? 'unified' : 'split';
    render();
  }}, 'split');
  render();
  return h('div', {},
    h('div', {class: 'diff-tools'}, toggle, h('span', {class: 'dim'}, ' ' + msg.rows + ' rows ', (msg.files || []).join(' '))),
    wrap);
}

// ---- the transcript (live and replayed) --------------------------------

class Transcript {
  constructor(root, live) {
    this.root = root;
    this.live = live;
    this.cards = new Map();
    this.lastCard = null;
    this.text = null;
    this.confirms = new Map();
    this.asks = new Map();
  }

  line(cls, ...parts) {
    this.text = null;
    const el = h('div', {class: 'line ' + cls}, ...parts);
    this.root.append(el);
    this.scroll();
    return el;
  }

  scroll() {
    if (this.live) window.scrollTo(0, document.body.scrollHeight);
  }

  streamText(d, reasoning) {
    if (!this.text || this.text.reasoning !== reasoning) {
      this.text = h('div', {class: reasoning ? 'model reasoning' : 'model'});
      this.text.reasoning = reasoning;
      this.root.append(this.text);
    }
    this.text.append(d);
    this.scroll();
  }

  event(e) {
    switch (e.ev) {
      case 'session.start':
        if (!this.live) this.line('task', '› ', e.task);
        else this.line('dim', 'session ' + e.id + ' · ' + e.model + ' · ' + e.strategy);
        break;
      case 'llm.req':
        this.text = null;
        setStatus('step ' + e.step + ' · asking ' + e.model);
        break;
      case 'llm.resp': {
        const u = e.usage || {};
        setStatus('step ' + e.step + ' · ' + (u.prompt || 0) + ' in · ' + (u.completion || 0) + ' out · ' + (u.cached || 0) + ' cached');
        break;
      }
      case 'tool.call': this.card(e); break;
      case 'guard': {
        const c = this.cards.get(e.step + ':' + e.call);
        if (c) {
          c.badge.textContent = e.decision;
          c.badge.className = 'badge ' + e.decision;
          if (e.decision === 'security' || e.decision === 'deny') {
            c.el.append(h('ul', {class: 'reasons'}, (e.reasons || []).map(r => h('li', {}, r.rule + ': ' + r.message))));
          }
        }
        break;
      }
      case 'confirm':
        if (!this.live) {
          const c = this.cards.get(e.step + ':' + e.call) || this.lastCard;
          const where = c ? c.el : this.root;
          where.append(h('div', {class: 'answered ' + (e.answer === 'yes' ? 'ok' : 'bad')},
            (e.kind === 'security' ? 'SECURITY CONFIRM' : 'confirm') + ': ' + e.answer + ' (by ' + e.by + ')'));
        }
        break;
      case 'confirm.answer':
        if (!this.live) {
          const where = this.lastCard ? this.lastCard.el : this.root;
          let text = e.answer + ' by ' + e.by;
          if (e.reason) text += ': ' + e.reason;
          if (e.scope) text += ' (standing approval: ' + e.scope + ')';
          if (e.saved_approval) text += '; saved ' + e.saved_approval;
          where.append(h('div', {class: 'dim'}, text));
        }
        break;
      case 'tool.result': this.result(e); break;
      case 'write': {
        const c = this.lastCard;
        if (c) c.el.append(h('div', {class: 'dim'}, 'written' + (e.version ? ' (previous version ' + e.version + ')' : '')));
        break;
      }
      case 'ask':
        if (!this.live) this.line('ask', '? ' + e.question + ' → ' + JSON.stringify(e.answer) + ' (by ' + e.by + ')');
        break;
      case 'warning': this.line('warn', '⚠ ' + e.message); break;
      case 'strategy': this.line('strategy', '· ' + e.action + ': ' + e.text); break;
      case 'turn.end':
        this.line('answer', h('div', {class: 'end'}, e.reason), h('div', {class: 'final'}, e.text));
        break;
      case 'error': this.line('error', '✗ ' + e.message); break;
      default: break;
    }
  }

  card(e) {
    this.text = null;
    const badge = h('span', {class: 'badge'}, '…');
    const result = h('div', {class: 'result'});
    // A long call (a whole file's content) shows its start; the rest and
    // the arguments are laid out only when asked for.
    const form = e.positional || e.raw_arguments || '';
    const formEl = h('pre', {class: 'form'}, form.length > FORM_SHOWN ? form.slice(0, FORM_SHOWN) : form);
    if (form.length > FORM_SHOWN) {
      const rest = h('button', {class: 'more', onclick: () => { formEl.textContent = form; rest.remove(); }},
        '… ' + (form.length - FORM_SHOWN) + ' more characters');
      formEl.append(rest);
    }
    const args = h('details', {class: 'args'}, h('summary', {}, 'arguments'));
    args.addEventListener('toggle', () => {
      if (args.open && args.children.length === 1) args.append(h('pre', {}, JSON.stringify(e.args, null, 2)));
    });
    const el = h('div', {class: 'card', 'data-call': e.step + ':' + e.call},
      h('div', {class: 'card-head'}, h('span', {class: 'tool'}, e.name), ' ', badge,
        e.by ? h('span', {class: 'dim'}, ' by ' + e.by) : null),
      formEl, args, result);
    this.root.append(el);
    const c = {el, badge, result};
    this.cards.set(e.step + ':' + e.call, c);
    this.lastCard = c;
    // Only calls made while the stream was open (not the backlog it gets
    // when it opens) say how fast a card appears.
    const at = Date.parse(e.t);
    if (this.live && window.nib.streamOpen && at >= window.nib.streamOpen) window.nib.cardDelays.push(Date.now() - at);
    this.scroll();
  }

  result(e) {
    const c = this.cards.get(e.step + ':' + e.call);
    const state = e.refused ? 'refused' : e.ok ? 'ok' : 'error';
    const el = h('div', {class: 'result-' + state},
      h('b', {}, state), ' ', e.summary || '', e.hint ? h('pre', {class: 'hint'}, e.hint) : null);
    if (c) { c.result.replaceChildren(el); c.el.classList.add('done'); }
    else this.root.append(el);
  }

  // A confirm from the live session, in the card of its call.
  confirm(msg) {
    const security = msg.kind === 'security';
    const box = h('div', {class: 'confirm ' + msg.kind, 'data-id': msg.id});
    const answerLine = h('div', {class: 'answer'});
    const buttons = [];
    const send = async (body, btn) => {
      buttons.forEach(b => b.disabled = true);
      try {
        await post('/api/confirm/' + msg.id, body);
      } catch (err) {
        answerLine.textContent = err.message;
        // A refusal (not someone else's answer): the confirm stays open.
        if (!/already answered/.test(err.message)) buttons.forEach(b => b.disabled = false);
      }
    };
    const reasonBox = h('div', {class: 'sub hidden'});
    const reasonInput = h('input', {class: 'reason', type: 'text', placeholder: 'why (the model is told)'});
    reasonBox.append(reasonInput, h('button', {class: 'send-reject', onclick: e => send({answer: 'no', reason: reasonInput.value}, e.target)}, 'reject'));
    reasonInput.addEventListener('keydown', ev => { if (ev.key === 'Enter') send({answer: 'no', reason: reasonInput.value}); });
    const editBox = h('div', {class: 'sub hidden'});
    if (msg.editable) {
      const area = h('textarea', {class: 'edit-text', rows: 12});
      area.value = msg.proposed || '';
      editBox.append(area, h('button', {class: 'send-edit', onclick: () => send({answer: 'edit', text: area.value})}, 'approve my text'));
    }
    const scopeBox = h('div', {class: 'sub hidden'});
    if (msg.suggestion) {
      scopeBox.append('Save a standing approval: ', h('b', {class: 'scope'}, msg.suggestion),
        ' (in your user config) ', h('button', {class: 'send-always', onclick: () => send({answer: 'always'})}, 'save and approve'));
    }
    const show = el => [reasonBox, editBox, scopeBox].forEach(b => b.classList.toggle('hidden', b !== el || !b.classList.contains('hidden')));
    const approve = h('button', {class: 'approve', onclick: () => send({answer: 'yes'})}, 'approve');
    const reject = h('button', {class: 'reject', onclick: () => { show(reasonBox); reasonInput.focus(); }}, 'reject…');
    buttons.push(approve, reject);
    const actions = h('div', {class: 'actions'}, approve, reject);
    if (msg.editable) {
      const edit = h('button', {class: 'edit', onclick: () => show(editBox)}, 'edit…');
      buttons.push(edit);
      actions.append(edit);
    }
    if (msg.suggestion) {
      const always = h('button', {class: 'always', onclick: () => show(scopeBox)}, 'always…');
      buttons.push(always);
      actions.append(always);
    } else if (security) {
      actions.append(h('span', {class: 'dim'}, ' standing approvals cannot answer a security confirm'));
    }
    // (append, unlike h, would write a null as the text "null")
    box.append(...[
      h('div', {class: 'confirm-head'}, security ? 'SECURITY CONFIRM' : 'confirm', ' · ', msg.tool, ' ', msg.path || ''),
      msg.again ? h('div', {class: 'warn'}, msg.again) : null,
      (msg.loose || []).length ? h('ul', {class: 'reasons'}, msg.loose.map(r => h('li', {}, r))) : null,
      msg.hunks && msg.hunks.length ? diffView(msg) : h('pre', {class: 'form'}, msg.form),
      actions, reasonBox, editBox, scopeBox, answerLine].filter(Boolean));
    const card = this.lastCard && !this.lastCard.el.classList.contains('done') ? this.lastCard : null;
    if (card) {
      // The guard's event comes after the answer; the confirm says it now.
      card.badge.textContent = msg.kind;
      card.badge.className = 'badge ' + msg.kind;
    }
    (card ? card.el : this.root).append(box);
    this.confirms.set(msg.id, {box, answerLine, buttons});
    this.text = null;
    this.scroll();
  }

  answered(msg) {
    const c = this.confirms.get(msg.id) || this.asks.get(msg.id);
    if (!c) return;
    c.buttons.forEach(b => b.disabled = true);
    let text = msg.answer + ' — answered ' + (msg.by === 'nib' ? 'by nib' : 'in ' + msg.by);
    if (msg.reason) text += ': ' + msg.reason;
    if (msg.saved) text += '; saved standing approval ' + msg.saved;
    c.answerLine.textContent = text;
    c.box.classList.add('closed', msg.answer === 'no' || msg.answer === 'skipped' ? 'said-no' : 'said-yes');
  }

  ask(msg) {
    const box = h('div', {class: 'ask', 'data-id': msg.id});
    const answerLine = h('div', {class: 'answer'});
    const buttons = [];
    const send = async value => {
      buttons.forEach(b => b.disabled = true);
      try { await post('/api/ask/' + msg.id, {answer: value}); }
      catch (err) { answerLine.textContent = err.message; if (!/already answered/.test(err.message)) buttons.forEach(b => b.disabled = false); }
    };
    const row = h('div', {class: 'actions'});
    if (msg.type === 'yesno') {
      buttons.push(h('button', {class: 'yes', onclick: () => send(true)}, 'yes'), h('button', {class: 'no', onclick: () => send(false)}, 'no'));
    } else if (msg.type === 'choice') {
      for (const c of msg.choices) buttons.push(h('button', {class: 'choice', onclick: () => send(c)}, c));
    } else {
      const input = h('input', {type: 'text', class: 'ask-text'});
      row.append(input);
      buttons.push(h('button', {class: 'send', onclick: () => send(input.value)}, 'send'));
    }
    buttons.push(h('button', {class: 'skip', onclick: () => send(null)}, 'skip'));
    row.append(...buttons);
    box.append(h('div', {class: 'confirm-head'}, '? ', msg.question), row, answerLine);
    this.root.append(box);
    this.asks.set(msg.id, {box, answerLine, buttons});
    this.scroll();
  }

  message(m) {
    switch (m.k) {
      case 'event': this.event(m.e); break;
      case 'text': this.streamText(m.d, false); break;
      case 'reasoning': this.streamText(m.d, true); break;
      case 'confirm': this.confirm(m); break;
      case 'answered': this.answered(m); break;
      case 'ask': this.ask(m); break;
      case 'auto': this.line('auto', '✓ approved by standing approval (' + m.scope + '): ' + m.form); break;
      case 'task': this.line('task', '› ', m.text); live.running(true); break;
      case 'done': this.line('dim', 'task ended: ' + m.status); live.running(false); break;
      case 'session': this.line('dim', 'live session ' + m.id + ' in ' + m.root + ' · ' + m.model); break;
      default: break;
    }
  }
}

// ---- views --------------------------------------------------------------

const main = document.getElementById('main');
const live = {
  el: null,
  transcript: null,
  source: null,
  composer: null,
  running(on) { if (this.composer) this.composer.classList.toggle('running', on); },
  start() {
    this.el = h('section', {id: 'live'});
    const log = h('div', {class: 'transcript'});
    const area = h('textarea', {class: 'task', rows: 2, placeholder: 'a task for the agent (Ctrl-Enter runs it)'});
    const note = h('span', {class: 'dim'});
    const run = async () => {
      try { await post('/api/task', {task: area.value}); area.value = ''; note.textContent = ''; }
      catch (err) { note.textContent = err.message; }
    };
    area.addEventListener('keydown', ev => { if (ev.key === 'Enter' && ev.ctrlKey) run(); });
    this.composer = h('div', {class: 'composer'}, area,
      h('button', {class: 'run', onclick: run}, 'run'),
      h('button', {class: 'interrupt', onclick: () => post('/api/interrupt', {}).catch(err => { note.textContent = err.message; })}, 'interrupt'),
      note);
    if (info.beside && !info.tasks) {
      // Beside the terminal client or nib exec: tasks are given there.
      area.classList.add('hidden');
      this.composer.querySelector('.run').classList.add('hidden');
      note.textContent = 'beside ' + info.beside + ': tasks are given there; confirms and questions can be answered here or there (the first answer wins)';
    }
    this.el.append(log, this.composer);
    this.transcript = new Transcript(log, true);
    this.source = new EventSource('/api/live/stream?token=' + encodeURIComponent(TOKEN));
    this.source.onmessage = ev => this.transcript.message(JSON.parse(ev.data));
    this.source.onopen = () => { window.nib.streamOpen = window.nib.streamOpen || Date.now(); };
    this.source.onerror = () => setStatus('reconnecting…');
  },
};

async function showSessions() {
  const list = await getJson('/api/sessions');
  const rows = list.map(s => h('tr', {},
    h('td', {}, h('a', {href: '#session/' + encodeURIComponent(s.id)}, s.id)),
    h('td', {}, s.started), h('td', {class: 'task-cell'}, s.task), h('td', {class: 'num'}, s.events), h('td', {}, s.end)));
  return h('section', {id: 'sessions'}, h('h2', {}, 'past sessions'),
    list.length ? h('table', {class: 'table'}, h('tr', {}, h('th', {}, 'session'), h('th', {}, 'started'), h('th', {}, 'task'), h('th', {}, 'events'), h('th', {}, 'end')), rows)
      : h('p', {class: 'dim'}, 'no sessions in this workspace yet'));
}

async function showSession(id) {
  const events = await getJson('/api/sessions/' + encodeURIComponent(id));
  const log = h('div', {class: 'transcript'});
  const t = new Transcript(log, false);
  for (const e of events) t.event(e);
  return h('section', {id: 'replay'}, h('h2', {}, 'session ' + id + ' (read-only)'), log);
}

let swebenchTimer = null;
async function showSwebench() {
  const run = await getJson('/api/swebench');
  const money = c => (c === null || c === undefined) ? '' : '$' + Number(c).toFixed(4);
  const rows = run.rows.map(r => h('tr', {class: 'status-' + r.status},
    h('td', {}, r.trajectory ? h('a', {href: '#swebench/' + encodeURIComponent(r.id)}, r.id) : r.id),
    h('td', {}, r.status), h('td', {class: 'num'}, r.steps ?? ''), h('td', {class: 'num'}, r.tokens ?? ''),
    h('td', {class: 'num'}, money(r.cost)), h('td', {class: 'num'}, r.seconds === null || r.seconds === undefined ? '' : Number(r.seconds).toFixed(1))));
  const section = h('section', {id: 'swebench'}, h('h2', {}, 'swebench ' + run.out + (run.finished ? '' : ' (running)')),
    h('table', {class: 'table'}, h('tr', {}, ['instance', 'status', 'steps', 'tokens', 'cost', 'seconds'].map(x => h('th', {}, x))), rows));
  if (!run.finished) swebenchTimer = setTimeout(route, 2000);
  return section;
}

async function showTrajectory(id) {
  const t = await getJson('/api/swebench/' + encodeURIComponent(id));
  const steps = (t.steps || []).map(s => h('div', {class: 'step'},
    h('div', {class: 'dim'}, 'step ' + s.step + (s.usage ? ' · ' + (s.usage.prompt || 0) + ' in · ' + (s.usage.completion || 0) + ' out' : '')),
    s.reasoning ? h('details', {}, h('summary', {}, 'reasoning'), h('pre', {}, s.reasoning)) : null,
    s.text ? h('div', {class: 'model'}, s.text) : null,
    (s.calls || []).map(c => h('div', {class: 'card done'},
      h('div', {class: 'card-head'}, h('span', {class: 'tool'}, c.name), ' ',
        h('span', {class: 'badge ' + (c.result && c.result.ok ? 'allow' : 'deny')}, c.result ? (c.result.refused ? 'refused' : c.result.ok ? 'ok' : 'error') : '')),
      h('pre', {class: 'form'}, c.positional || c.raw_arguments || ''),
      h('details', {}, h('summary', {}, 'output'), h('pre', {}, c.output || (c.result && c.result.summary) || '')))),
    (s.notes || []).map(n => h('div', {class: 'strategy'}, '· ' + (typeof n === 'string' ? n : JSON.stringify(n)))),
    s.error ? h('div', {class: 'error'}, '✗ ' + (typeof s.error === 'string' ? s.error : JSON.stringify(s.error))) : null));
  return h('section', {id: 'trajectory'}, h('h2', {}, id + ' · ' + t.status),
    h('p', {class: 'final'}, t.message || ''), h('a', {href: '#swebench'}, '← all instances'), steps);
}

let info = {live: false};
async function route() {
  clearTimeout(swebenchTimer);
  const hash = decodeURIComponent(location.hash.slice(1)) || (info.live ? 'live' : 'sessions');
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('here', hash.startsWith(a.id.slice(4)));
  try {
    let view;
    if (hash === 'live' && live.el) view = live.el;
    else if (hash === 'sessions') view = await showSessions();
    else if (hash.startsWith('session/')) view = await showSession(hash.slice(8));
    else if (hash === 'swebench') view = await showSwebench();
    else if (hash.startsWith('swebench/')) view = await showTrajectory(hash.slice(9));
    else view = h('p', {class: 'dim'}, 'nothing here: ' + hash);
    if (main.firstChild !== view) main.replaceChildren(view);
  } catch (err) {
    main.replaceChildren(h('p', {class: 'error'}, err.message));
  }
}

(async () => {
  try { info = await getJson('/api/info'); } catch (err) { setStatus(err.message); }
  document.getElementById('nav-live').classList.toggle('hidden', !info.live);
  document.getElementById('nav-swebench').classList.toggle('hidden', !info.swebench);
  if (info.live) live.start();
  window.addEventListener('hashchange', route);
  route();
})();
