// The delay-queue console: a page of plain DOM code, no framework. Everything that comes from the queue (topics,
// ids, payloads, errors) is put on the page as text (textContent, text nodes), never parsed as HTML.
'use strict';

(() => {
  const POLL_MILLIS = 2000;
  const REQUEST_TIMEOUT_MILLIS = 60000;
  const HISTORY_MILLIS = 5 * 60 * 1000;
  const PAGE_SIZE = 20;
  const api = new URL('api/', document.baseURI);

  let session = null;
  let current = null; // the view on screen: { update() }
  const history = []; // overview samples: { at, topics: { name: summary } }

  // ---- DOM helpers ------------------------------------------------------------------------------------------------

  function el(tag, attributes, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null || value === false) {
        continue;
      }
      if (name === 'onclick') {
        element.addEventListener('click', value);
      } else if (name === 'text') {
        element.textContent = value;
      } else {
        element.setAttribute(name, value === true ? '' : String(value));
      }
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined && child !== false) {
        element.append(child instanceof Node ? child : document.createTextNode(String(child)));
      }
    }
    return element;
  }

  function svg(tag, attributes) {
    const element = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      element.setAttribute(name, String(value));
    }
    return element;
  }

  function setText(root, selector, text) {
    const target = root.querySelector(selector);
    if (target) {
      target.textContent = text;
    }
  }

  // ---- API --------------------------------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  async function failure(response) {
    let detail = response.status + ' ' + response.statusText;
    try {
      const problem = await response.json();
      detail = problem.detail || problem.title || detail;
    } catch (ignored) {
      // not a problem document: keep the status line
    }
    return new ApiError(response.status, detail);
  }

  // A read that gets no answer fails after REQUEST_TIMEOUT_MILLIS (a proxy holding the connection, a link gone
  // half-open): the page's one refresh at a time would otherwise wait on it for good. Writes are not cut short: one
  // may take long, and would go on in the application whatever the page said.
  async function get(path, parameters) {
    const url = new URL(path, api);
    for (const [name, value] of Object.entries(parameters || {})) {
      url.searchParams.set(name, value);
    }
    try {
      const response = await fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MILLIS) });
      if (!response.ok) {
        throw await failure(response);
      }
      return await response.json();
    } catch (error) {
      if (error.name === 'TimeoutError') {
        throw new Error('no answer from the application within ' + REQUEST_TIMEOUT_MILLIS / 1000 + ' s');
      }
      throw error;
    }
  }

  async function post(path, body) {
    const headers = { Accept: 'application/json', 'Content-Type': 'application/json' };
    headers[session.writeHeader] = '1';
    if (session.csrf) {
      headers[session.csrf.headerName] = session.csrf.token;
    }
    const response = await fetch(new URL(path, api), {
      method: 'POST', headers, credentials: 'same-origin', body: JSON.stringify(body || {})
    });
    if (!response.ok) {
      throw await failure(response);
    }
    return response.json();
  }

  function topicPath(topic) {
    return 'topics/' + encodeURIComponent(topic);
  }

  // ---- reporting and confirming -----------------------------------------------------------------------------------

  function report(message, isError) {
    const notice = document.getElementById('notice');
    notice.textContent = message;
    notice.className = isError ? 'error' : 'ok';
    notice.hidden = false;
  }

  function confirmAction(question) {
    const dialog = document.getElementById('confirm');
    document.getElementById('confirm-text').textContent = question;
    return new Promise((resolve) => {
      const ok = document.getElementById('confirm-ok');
      const cancel = document.getElementById('confirm-cancel');
      const finish = (answer) => {
        ok.removeEventListener('click', onOk);
        cancel.removeEventListener('click', onCancel);
        dialog.removeEventListener('cancel', onCancel);
        dialog.close();
        resolve(answer);
      };
      const onOk = () => finish(true);
      const onCancel = () => finish(false);
      ok.addEventListener('click', onOk);
      cancel.addEventListener('click', onCancel);
      dialog.addEventListener('cancel', onCancel);
      dialog.showModal();
    });
  }

  // Asks, then runs the write and reports what it did; returns whether it ran and succeeded.
  async function act(question, write) {
    if (!(await confirmAction(question))) {
      return false;
    }
    try {
      const result = await write();
      report(result.message, false);
      return true;
    } catch (error) {
      report(error.message, true);
      return false;
    } finally {
      refresh();
    }
  }

  // ---- formatting -------------------------------------------------------------------------------------------------

  function count(value) {
    return value === null || value === undefined ? '—' : Number(value).toLocaleString('en');
  }

  function millis(value) {
    if (value === null || value === undefined) {
      return '—';
    }
    if (value < 1000) {
      return (Math.round(value * 10) / 10) + ' ms';
    }
    if (value < 120000) {
      return (Math.round(value / 100) / 10) + ' s';
    }
    return Math.round(value / 60000) + ' min';
  }

  function when(iso) {
    if (!iso) {
      return '—';
    }
    const at = new Date(iso);
    const delta = at.getTime() - Date.now();
    const relative = Math.abs(delta) < 1000 ? 'now'
      : (delta > 0 ? 'in ' + millis(delta) : millis(-delta) + ' ago');
    return at.toISOString().replace('T', ' ').replace('Z', ' UTC') + ' (' + relative + ')';
  }

  function prettyPayload(payload) {
    if (payload === null || payload === undefined || payload === '') {
      return '(no payload)';
    }
    try {
      return JSON.stringify(JSON.parse(payload), null, 2);
    } catch (ignored) {
      return payload;
    }
  }

  function pausedState(paused) {
    return el('span', { class: 'state ' + (paused ? 'paused' : 'running') }, paused ? 'paused' : 'running');
  }

  function rateLimitText(rateLimit) {
    return rateLimit ? rateLimit.replace('/', ' per ') : 'none';
  }

  function thisInstance() {
    return el('span', { class: 'sub' }, 'this instance');
  }

  // ---- history and rates ------------------------------------------------------------------------------------------

  function record(topics) {
    const at = Date.now();
    const sample = { at, topics: {} };
    for (const topic of topics) {
      sample.topics[topic.topic] = topic;
    }
    history.push(sample);
    while (history.length > 2 && history[0].at < at - HISTORY_MILLIS) {
      history.shift();
    }
  }

  // Jobs per second this instance added (in) and completed (out), between two samples; null without metrics.
  function rates(previous, next, topic) {
    const before = previous && previous.topics[topic];
    const after = next.topics[topic];
    if (!before || !before.local || !after || !after.local) {
      return null;
    }
    const seconds = (next.at - previous.at) / 1000;
    return {
      in: Math.max(0, after.local.added - before.local.added) / seconds,
      out: Math.max(0, after.local.completed - before.local.completed) / seconds
    };
  }

  function totals(sample) {
    const sum = { delayed: 0, ready: 0, reserved: 0, dead: 0 };
    for (const topic of Object.values(sample.topics)) {
      if (topic.problem) {
        continue; // its counts could not be read
      }
      for (const state of Object.keys(sum)) {
        sum[state] += topic[state];
      }
    }
    return sum;
  }

  function ago(millisAgo) {
    return millisAgo < 120000 ? Math.round(millisAgo / 1000) + ' s ago' : Math.round(millisAgo / 60000) + ' min ago';
  }

  function chart(title, series) {
    const width = 480;
    const height = 140;
    const top = 14;
    const bottom = 18;
    const figure = el('div', { class: 'chart' }, el('h2', {}, title));
    const drawing = svg('svg', { viewBox: '0 0 ' + width + ' ' + height, preserveAspectRatio: 'none', role: 'img' });
    const max = Math.max(1, ...series.flatMap((line) => line.points.map((point) => point.value)));
    const end = Date.now();
    // from the first sample, at least a minute and at most the history kept
    const span = Math.min(HISTORY_MILLIS, Math.max(60000, end - (history.length > 0 ? history[0].at : end)));
    const start = end - span;
    drawing.append(svg('line', { class: 'axis', x1: 0, y1: height - bottom, x2: width, y2: height - bottom }));
    drawing.append(svg('line', { class: 'axis', x1: 0, y1: top, x2: width, y2: top }));
    const maxLabel = svg('text', { class: 'label', x: 2, y: top - 3 });
    maxLabel.textContent = count(Math.round(max * 10) / 10);
    const startLabel = svg('text', { class: 'label', x: 2, y: height - 4 });
    startLabel.textContent = ago(span);
    const now = svg('text', { class: 'label', x: width - 24, y: height - 4 });
    now.textContent = 'now';
    drawing.append(maxLabel, startLabel, now);
    for (const line of series) {
      const points = line.points.map((point) => {
        const x = ((point.at - start) / span) * width;
        const y = height - bottom - (point.value / max) * (height - top - bottom);
        return x.toFixed(1) + ',' + y.toFixed(1);
      });
      if (points.length > 0) {
        drawing.append(svg('polyline', { class: 's-' + line.key, points: points.join(' ') }));
      }
    }
    figure.append(drawing, el('div', { class: 'legend' },
      series.map((line) => el('span', {}, el('span', { class: 'swatch s-' + line.key }), line.name))));
    return figure;
  }

  function charts() {
    const waiting = ['delayed', 'ready', 'reserved', 'dead'].map((state) => ({
      key: state, name: state, points: history.map((sample) => ({ at: sample.at, value: totals(sample)[state] }))
    }));
    const flow = [['in', 'in (added)'], ['out', 'out (completed)']].map(([key, name]) => ({
      key, name, points: []
    }));
    for (let i = 1; i < history.length; i++) {
      let sumIn = 0;
      let sumOut = 0;
      for (const topic of Object.keys(history[i].topics)) {
        const rate = rates(history[i - 1], history[i], topic);
        if (rate) {
          sumIn += rate.in;
          sumOut += rate.out;
        }
      }
      flow[0].points.push({ at: history[i].at, value: sumIn });
      flow[1].points.push({ at: history[i].at, value: sumOut });
    }
    return el('div', { class: 'charts' },
      chart('Jobs waiting, all instances', waiting),
      chart('Jobs per second, this instance', flow));
  }

  // ---- views ------------------------------------------------------------------------------------------------------

  function crumbs(...parts) {
    const nav = document.getElementById('crumbs');
    nav.replaceChildren(...parts.flatMap((part, index) => (index === 0 ? [part] : [' / ', part])));
  }

  function overview(root) {
    crumbs(el('a', { href: '#/' }, 'Topics'));
    root.replaceChildren(el('h1', {}, 'Topics'), el('div', { id: 'charts' }), el('div', { id: 'topics' }));
    return {
      update() {
        const latest = history[history.length - 1];
        root.querySelector('#charts').replaceChildren(charts());
        if (!latest) {
          return;
        }
        const previous = history[history.length - 2];
        const names = Object.keys(latest.topics);
        if (names.length === 0) {
          root.querySelector('#topics').replaceChildren(el('p', { class: 'muted' },
            'No topics yet: a topic appears once this application listens to it, sends to it, or names it under '
            + 'delay-queue.topics.'));
          return;
        }
        const rows = names.map((name) => {
          const topic = latest.topics[name];
          if (topic.problem) {
            return el('tr', { 'data-topic': name },
              el('td', {}, el('a', { href: '#/topic/' + encodeURIComponent(name) }, name)),
              el('td', { class: 'problem', colspan: '10', 'data-field': 'problem' }, topic.problem));
          }
          const rate = rates(previous, latest, name);
          const lateness = topic.local && topic.local.lateness && topic.local.lateness.count > 0
            ? topic.local.lateness : null;
          const percentile = (key) => (lateness && lateness.percentiles[key] !== undefined
            ? millis(lateness.percentiles[key]) : '—');
          return el('tr', { 'data-topic': name },
            el('td', {}, el('a', { href: '#/topic/' + encodeURIComponent(name) }, name)),
            el('td', { class: 'num', 'data-field': 'delayed' }, count(topic.delayed)),
            el('td', { class: 'num', 'data-field': 'ready' }, count(topic.ready)),
            el('td', { class: 'num', 'data-field': 'reserved' }, count(topic.reserved)),
            el('td', { class: 'num', 'data-field': 'dead' }, count(topic.dead)),
            el('td', { class: 'num' }, millis(topic.oldestReadyAgeMillis)),
            el('td', { 'data-field': 'paused' }, pausedState(topic.paused)),
            el('td', { 'data-field': 'rateLimit' }, rateLimitText(topic.rateLimit)),
            el('td', { class: 'num rate-in' }, rate ? rate.in.toFixed(1) : '—'),
            el('td', { class: 'num rate-out' }, rate ? rate.out.toFixed(1) : '—'),
            el('td', { class: 'num' }, percentile('p50') + ' / ' + percentile('p99')));
        });
        root.querySelector('#topics').replaceChildren(el('table', {},
          el('thead', {}, el('tr', {},
            el('th', {}, 'Topic'), el('th', { class: 'num' }, 'Delayed'), el('th', { class: 'num' }, 'Ready'),
            el('th', { class: 'num' }, 'Reserved'), el('th', { class: 'num' }, 'Dead'),
            el('th', { class: 'num' }, 'Oldest ready'), el('th', {}, 'State'),
            el('th', { title: 'Jobs started per interval at most, across every instance' }, 'Rate limit'),
            el('th', { class: 'num', title: 'Jobs this instance added per second' }, 'In/s', thisInstance()),
            el('th', { class: 'num', title: 'Jobs this instance completed per second' }, 'Out/s', thisInstance()),
            el('th', { class: 'num', title: 'Delivery lateness measured by this instance, last few minutes' },
              'Lateness p50 / p99', thisInstance()))),
          el('tbody', {}, rows)));
      }
    };
  }

  function topicView(root, topic) {
    crumbs(el('a', { href: '#/' }, 'Topics'), el('a', { href: '#/topic/' + encodeURIComponent(topic) }, topic));
    let tab = 'DEAD';
    let offset = 0;
    let shown = null; // what the panel shows, so that a refresh redraws it only when it changed
    let controlShown = null;
    const selected = new Set();
    const cards = el('div', { class: 'cards' }, ['delayed', 'ready', 'reserved', 'dead'].map((state) =>
      el('div', { class: 'card' }, el('div', { class: 'name' }, state),
        el('div', { class: 'value', 'data-count': state }, '—'))));
    const control = el('div', { class: 'toolbar', id: 'topic-control' });
    const search = el('input', { type: 'text', id: 'search-id', placeholder: 'Job id', 'aria-label': 'Job id' });
    const openJob = () => {
      if (search.value.trim() !== '') {
        location.hash = '#/topic/' + encodeURIComponent(topic) + '/job/' + encodeURIComponent(search.value.trim());
      }
    };
    search.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        openJob();
      }
    });
    const tabs = el('div', { class: 'tabs', role: 'tablist' });
    const panel = el('div', { id: 'panel' });
    root.replaceChildren(el('h1', {}, 'Topic ', topic), cards, control,
      el('div', { class: 'toolbar' }, search, el('button', { type: 'button', id: 'search-open', onclick: openJob },
        'Open job')),
      tabs, panel);

    const tabNames = { DEAD: 'Dead letters', DELAYED: 'Delayed', READY: 'Ready', RESERVED: 'Reserved',
      consumers: 'Consumers' };
    function drawTabs() {
      tabs.replaceChildren(...Object.entries(tabNames).map(([key, name]) => el('button', {
        type: 'button', role: 'tab', 'data-tab': key, class: key === tab ? 'active' : null,
        onclick: () => { tab = key; offset = 0; shown = null; selected.clear(); drawTabs(); loadPanel(); }
      }, name)));
    }

    function pager(page) {
      const last = Math.min(page.offset + page.limit, page.total);
      // a page reaches at most maxDepth jobs deep; the jobs beyond are opened by id
      const deepest = page.offset + 2 * page.limit > page.maxDepth;
      return el('div', { class: 'pager' },
        el('button', { type: 'button', disabled: page.offset === 0,
          onclick: () => { offset = Math.max(0, offset - PAGE_SIZE); shown = null; loadPanel(); } }, 'Previous'),
        el('span', {}, page.total === 0 ? 'none' : (page.offset + 1) + '–' + last + ' of ' + count(page.total)),
        el('button', { type: 'button', disabled: last >= page.total || deepest,
          onclick: () => { offset += PAGE_SIZE; shown = null; loadPanel(); } }, 'Next'),
        deepest && last < page.total ? el('span', {}, 'Pages reach ' + count(page.maxDepth)
          + ' jobs deep; open the jobs beyond by their id.') : null);
    }

    function jobLink(id) {
      return el('a', { href: '#/topic/' + encodeURIComponent(topic) + '/job/' + encodeURIComponent(id),
        'data-job': id }, id);
    }

    function payloadCell(job) {
      const cut = job.payloadBytes > new TextEncoder().encode(job.payloadPreview).length;
      return el('td', { class: 'payload-line', title: job.payloadPreview }, job.payloadPreview + (cut ? '…' : ''));
    }

    function deadLetterActions() {
      if (!session.writesEnabled) {
        return '';
      }
      return el('div', { class: 'toolbar' },
        el('button', { type: 'button', id: 'replay-selected', onclick: () => {
          if (selected.size === 0) {
            report('Select the dead letters to replay first.', true);
            return;
          }
          // the selection stays when the question is cancelled or the write fails: its boxes are still ticked
          act('Replay the ' + selected.size + ' selected dead letters of topic ' + topic + '?',
            () => post(topicPath(topic) + '/dead-letters/replay', { ids: [...selected] }))
            .then((replayed) => {
              if (replayed) {
                selected.clear();
              }
            });
        } }, 'Replay selected'),
        el('button', { type: 'button', id: 'replay-all', onclick: () => act(
          'Replay every dead letter of topic ' + topic + '?',
          () => post(topicPath(topic) + '/dead-letters/replay-all')) }, 'Replay all'),
        el('button', { type: 'button', id: 'purge', class: 'danger', onclick: () => act(
          'Delete every dead letter of topic ' + topic + '? This cannot be undone.',
          () => post(topicPath(topic) + '/dead-letters/purge')) }, 'Purge all'));
    }

    // The columns of each state's list: a heading and the cell of a job.
    const columns = {
      DELAYED: [['Due', (job) => el('td', {}, when(job.dueAt))]],
      READY: [['Due', (job) => el('td', {}, when(job.dueAt))]],
      RESERVED: [['Lease deadline', (job) => el('td', { 'data-field': 'leaseDeadline' }, when(job.leaseDeadline))]],
      DEAD: [['Died', (job) => el('td', {}, when(job.diedAt))]]
    };

    async function loadJobs(state) {
      const requested = offset;
      const page = await get(topicPath(topic) + '/jobs', { state, offset: requested, limit: PAGE_SIZE });
      if (tab !== state || offset !== requested) {
        return; // the operator moved to another tab or page meanwhile, whose own read draws it
      }
      if (page.jobs.length === 0 && requested > 0) {
        // this page's jobs went (replayed, cancelled, run) while earlier pages remain: show the last page with jobs
        const lastWithJobs = Math.floor((Math.min(page.total, page.maxDepth) - 1) / PAGE_SIZE) * PAGE_SIZE;
        offset = Math.max(0, Math.min(requested - PAGE_SIZE, lastWithJobs));
        shown = null;
        return loadJobs(state);
      }
      const key = state + '|' + JSON.stringify(page);
      if (key === shown) {
        return;
      }
      shown = key;
      const dead = state === 'DEAD';
      const selectable = dead && session.writesEnabled;
      const rows = page.jobs.map((job) => {
        let box = null;
        if (selectable) {
          box = el('input', { type: 'checkbox', 'aria-label': 'Select ' + job.id, checked: selected.has(job.id) });
          box.addEventListener('change', () => (box.checked ? selected.add(job.id) : selected.delete(job.id)));
        }
        return el('tr', { 'data-job-row': job.id },
          selectable ? el('td', {}, box) : null,
          el('td', {}, jobLink(job.id)),
          columns[state].map(([, cell]) => cell(job)),
          el('td', { class: 'num' }, job.attempts + ' of ' + job.maxAttempts),
          dead ? el('td', { class: 'error-line', title: job.lastError || '' }, job.lastError || '—')
            : payloadCell(job));
      });
      const noun = dead ? 'dead letters' : state.toLowerCase() + ' jobs';
      panel.replaceChildren(dead ? deadLetterActions() : '', page.jobs.length === 0
        ? el('p', { class: 'muted', id: dead ? 'no-dead-letters' : 'no-jobs' }, 'No ' + noun + '.')
        : el('table', { id: dead ? 'dead-letters' : 'jobs' }, el('thead', {}, el('tr', {},
          selectable ? el('th', {}, '') : null, el('th', {}, 'Id'),
          columns[state].map(([heading]) => el('th', {}, heading)),
          el('th', { class: 'num' }, 'Attempts'), el('th', {}, dead ? 'Last error' : 'Payload'))),
        el('tbody', {}, rows)), pager(page));
    }

    async function loadConsumers() {
      const consumers = await get(topicPath(topic) + '/consumers');
      const key = 'consumers|' + JSON.stringify(consumers);
      if (key === shown) {
        return;
      }
      shown = key;
      panel.replaceChildren(consumers.length === 0
        ? el('p', { class: 'muted', id: 'no-consumers' }, 'No live consumer of this topic on any instance.')
        : el('table', { id: 'consumers' }, el('thead', {}, el('tr', {}, el('th', {}, 'Instance'),
          el('th', {}, 'Container'), el('th', { class: 'num' }, 'In flight / concurrency'),
          el('th', { class: 'num', title: 'Since the consumer started' }, 'Claimed / finished / failed'),
          el('th', {}, 'Last claim'), el('th', {}, 'State'), el('th', {}, 'Started'),
          el('th', {}, 'Heartbeat expires'))),
        el('tbody', {}, consumers.map((consumer) => el('tr', { 'data-consumer': consumer.containerId },
          el('td', {}, consumer.instance),
          el('td', {}, consumer.containerId),
          el('td', { class: 'num' }, consumer.inFlight + ' / ' + consumer.concurrency),
          el('td', { class: 'num' }, count(consumer.claimed) + ' / ' + count(consumer.finished) + ' / '
            + count(consumer.failed)),
          el('td', {}, when(consumer.lastClaimAt)),
          el('td', {}, pausedState(consumer.paused)), el('td', {}, when(consumer.startedAt)),
          el('td', {}, when(consumer.expiresAt)))))));
    }

    async function loadPanel() {
      const requestedTab = tab;
      const requestedOffset = offset;
      try {
        if (tab === 'consumers') {
          await loadConsumers();
        } else {
          await loadJobs(tab);
        }
      } catch (error) {
        if (tab !== requestedTab || offset !== requestedOffset) {
          return; // a read of a tab or page the operator has left
        }
        shown = null; // the next read draws its page, even one unchanged since before the error
        panel.replaceChildren(el('p', { class: 'unavailable' }, error.message));
      }
    }

    function drawControl(detail) {
      const summary = detail.summary;
      const key = summary.paused + '|' + summary.rateLimit + '|' + detail.promotionLagMillis;
      if (key === controlShown) {
        return;
      }
      controlShown = key;
      const parts = [el('span', {}, 'State: '), pausedState(summary.paused)];
      if (session.writesEnabled) {
        parts.push(summary.paused
          ? el('button', { type: 'button', id: 'resume', class: 'primary', onclick: () => act(
            'Resume topic ' + topic + ' on every instance?', () => post(topicPath(topic) + '/resume')) }, 'Resume')
          : el('button', { type: 'button', id: 'pause', class: 'danger', onclick: () => act(
            'Pause topic ' + topic + ' on every instance? Running jobs finish; no new job is claimed until it is '
            + 'resumed.', () => post(topicPath(topic) + '/pause')) }, 'Pause'));
      }
      parts.push(el('span', { class: 'separator' }, 'Rate limit: '),
        el('span', { id: 'rate-limit' }, rateLimitText(summary.rateLimit)));
      if (session.writesEnabled) {
        const input = el('input', { type: 'text', id: 'rate-limit-value', class: 'short', placeholder: '100/1s',
          'aria-label': 'Rate limit: jobs per interval, such as 100/1s' });
        const setLimit = () => {
          const value = input.value.trim();
          if (value === '') {
            report('Give a rate limit as jobs per interval, such as 100/1s or 5/1m.', true);
            return;
          }
          act('Limit topic ' + topic + ' to ' + value + ' on every instance?',
            () => post(topicPath(topic) + '/rate-limit', { rateLimit: value }));
        };
        input.addEventListener('keydown', (event) => {
          if (event.key === 'Enter') {
            setLimit();
          }
        });
        parts.push(input, el('button', { type: 'button', id: 'set-rate-limit', onclick: setLimit }, 'Set limit'));
        if (summary.rateLimit) {
          parts.push(el('button', { type: 'button', id: 'remove-rate-limit', onclick: () => act(
            'Remove the rate limit of topic ' + topic + '? Its jobs start as fast as its consumers take them.',
            () => post(topicPath(topic) + '/rate-limit/remove')) }, 'Remove limit'));
        }
      }
      parts.push(el('span', { class: 'muted separator' }, 'Promotion lag: ' + millis(detail.promotionLagMillis)));
      control.replaceChildren(...parts);
    }

    drawTabs();
    loadPanel();
    return {
      async update() {
        const detail = await get(topicPath(topic));
        for (const state of ['delayed', 'ready', 'reserved', 'dead']) {
          setText(cards, '[data-count="' + state + '"]', count(detail.summary[state]));
        }
        drawControl(detail);
        await loadPanel();
      }
    };
  }

  function jobView(root, topic, id) {
    const topicLink = el('a', { href: '#/topic/' + encodeURIComponent(topic) }, topic);
    crumbs(el('a', { href: '#/' }, 'Topics'), topicLink, el('span', {}, id));
    const body = el('div', { id: 'job' });
    root.replaceChildren(el('h1', {}, 'Job ', el('span', { id: 'job-id' }, id)), body);
    let lastState = null;
    const path = topicPath(topic) + '/job';

    function actions(job) {
      if (!session.writesEnabled) {
        return null;
      }
      const buttons = [];
      if (job.state === 'DELAYED') {
        buttons.push(el('button', { type: 'button', id: 'run-now', class: 'primary', onclick: () => act(
          'Run job ' + id + ' now, ahead of its due time?', () => post(path + '/run-now', { id })) }, 'Run now'));
      }
      if (job.state === 'DELAYED' || job.state === 'READY') {
        const input = el('input', { type: 'text', id: 'reschedule-to', placeholder: '5m, 2h or 2030-01-01T09:00:00Z',
          'aria-label': 'New due time' });
        buttons.push(input, el('button', { type: 'button', id: 'reschedule', onclick: () => {
          const value = input.value.trim();
          if (value === '') {
            report('Give a delay such as 5m, or an instant such as 2030-01-01T09:00:00Z.', true);
            return;
          }
          const body = /^\d{4}-\d{2}-\d{2}T/.test(value) ? { id, at: value } : { id, delay: value };
          act('Reschedule job ' + id + ' to ' + value + '?', () => post(path + '/reschedule', body));
        } }, 'Reschedule'));
      }
      if (job.state === 'DEAD') {
        buttons.push(el('button', { type: 'button', id: 'replay', class: 'primary', onclick: () => act(
          'Replay dead letter ' + id + '? It goes back to ready with a fresh set of attempts.',
          () => post(path + '/replay', { id })) }, 'Replay'));
      }
      buttons.push(el('button', { type: 'button', id: 'cancel', class: 'danger', onclick: () => act(
        'Cancel job ' + id + '? It is deleted, whatever its state; this cannot be undone.',
        () => post(path + '/cancel', { id })) }, 'Cancel job'));
      return el('div', { class: 'toolbar' }, buttons);
    }

    function field(name, value, key) {
      return [el('dt', {}, name), el('dd', { 'data-field': key }, value)];
    }

    return {
      async update() {
        let job;
        try {
          job = await get(path, { id });
        } catch (error) {
          if (error.status === 404) {
            lastState = null;
            body.replaceChildren(el('p', { id: 'job-gone', class: 'muted' }, 'There is no job ' + id + ' on topic '
              + topic + ' (any more): it finished, was cancelled or purged, or never was.'));
            return;
          }
          throw error;
        }
        const key = job.state + '|' + job.attempts + '|' + job.dueAt + '|' + job.lastError + '|' + job.payload;
        if (key === lastState) {
          setText(body, '[data-field="dueAt"]', when(job.dueAt));
          return;
        }
        lastState = key;
        body.replaceChildren(
          el('dl', { class: 'fields' },
            field('State', el('span', { class: 'state ' + job.state, id: 'job-state' }, job.state), 'state'),
            field('Due', when(job.dueAt), 'dueAt'),
            field('Attempts', job.attempts + ' of ' + job.maxAttempts, 'attempts'),
            field('Time to run', millis(job.ttrMillis), 'ttr'),
            job.leaseDeadline ? field('Lease deadline', when(job.leaseDeadline), 'leaseDeadline') : [],
            job.diedAt ? field('Died', when(job.diedAt), 'diedAt') : []),
          actions(job) || '',
          el('h2', {}, 'Payload'),
          el('pre', { id: 'payload' }, prettyPayload(job.payload)),
          el('h2', {}, 'Last error'),
          job.lastError ? el('pre', { id: 'last-error' }, job.lastError)
            : el('p', { class: 'muted', id: 'last-error' }, 'None.'),
          el('p', { class: 'muted' }, 'The queue keeps the class and message of the last error (up to 1,000 '
            + 'characters); the full stack trace is in the consumer\'s log.'));
      }
    };
  }

  // ---- routing and polling ----------------------------------------------------------------------------------------

  function route() {
    const root = document.getElementById('view');
    const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
    document.getElementById('notice').hidden = true;
    if (parts[0] === 'topic' && parts.length >= 4 && parts[2] === 'job') {
      current = jobView(root, parts[1], parts.slice(3).join('/'));
    } else if (parts[0] === 'topic' && parts[1]) {
      current = topicView(root, parts[1]);
    } else {
      current = overview(root);
    }
    refresh();
  }

  let refreshing = false;
  let refreshAgain = false;

  // One refresh at a time: those asked for while one is under way (the poll's, a route's, a write's) make one more
  // after it, so a slow API or a Redis that does not answer never has a page pile requests onto the application.
  async function refresh() {
    if (refreshing) {
      refreshAgain = true;
      return;
    }
    refreshing = true;
    try {
      do {
        refreshAgain = false;
        await refreshOnce();
      } while (refreshAgain);
    } finally {
      refreshing = false;
    }
  }

  async function refreshOnce() {
    const connection = document.getElementById('connection');
    try {
      record(await get('topics'));
      if (current) {
        await current.update();
      }
      connection.textContent = 'updated ' + new Date().toLocaleTimeString('en-GB');
      connection.className = 'connection';
    } catch (error) {
      connection.textContent = error.message;
      connection.className = 'connection down';
    }
  }

  async function start() {
    try {
      session = await get('session');
    } catch (error) {
      document.getElementById('view').replaceChildren(el('p', { class: 'unavailable' },
        'The console cannot reach its API: ' + error.message));
      return;
    }
    const mode = document.getElementById('mode');
    mode.textContent = session.writesEnabled ? 'writes enabled' : 'read-only';
    mode.className = 'badge' + (session.writesEnabled ? ' writes' : '');
    window.addEventListener('hashchange', route);
    route();
    setInterval(refresh, POLL_MILLIS);
  }

  start();
})();
