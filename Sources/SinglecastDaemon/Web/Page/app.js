// The web view: the daemon's JSON-RPC methods over POST /rpc and its events over /events. Everything a feed or a
// server says is put on the page with textContent, never as markup.
'use strict';

const page = {
  csrf: null,
  nextRequestID: 1,
  podcasts: [],
  podcastID: null,
  episodes: [],
  downloads: new Map(),
  view: 'podcasts',
  reloadTimers: new Map(),
};

const $ = (id) => document.getElementById(id);

// Requests name the origin without the page's own URL: a page opened as http://user:password@host/ would
// otherwise resolve '/rpc' with the credentials in it, which fetch refuses.
const origin = location.origin;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

function button(label, action, title) {
  const node = element('button', null, label);
  node.type = 'button';
  if (title) node.title = title;
  node.addEventListener('click', async () => {
    node.disabled = true;
    try {
      await action();
    } catch (error) {
      showMessage(error.message);
    } finally {
      node.disabled = false;
    }
  });
  return node;
}

function showMessage(text, ok) {
  const node = $('message');
  node.textContent = text;
  node.className = ok ? 'ok' : '';
  node.hidden = false;
  clearTimeout(showMessage.timer);
  showMessage.timer = setTimeout(() => { node.hidden = true; }, ok ? 4000 : 10000);
}

async function session() {
  const response = await fetch(`${origin}/session`, { credentials: 'same-origin', cache: 'no-store' });
  if (!response.ok) throw new Error(`the daemon refused the session (${response.status})`);
  page.csrf = (await response.json()).csrf_token;
}

// One JSON-RPC call; a JSON-RPC error becomes an Error carrying the daemon's message.
async function rpc(method, params) {
  if (!page.csrf) await session();
  const body = { jsonrpc: '2.0', id: page.nextRequestID++, method };
  if (params !== undefined) body.params = params;
  let response = await post(body);
  if (response.status === 403) {
    await session();
    response = await post(body);
  }
  if (!response.ok) throw new Error(`${method}: HTTP ${response.status}`);
  const answer = await response.json();
  if (answer.error) throw new Error(answer.error.message);
  return answer.result;
}

function post(body) {
  return fetch(`${origin}/rpc`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Singlecast-CSRF': page.csrf },
    body: JSON.stringify(body),
  });
}

// Several events in a row (a refresh, a bulk mark) reload a list once.
function reloadSoon(key, action) {
  clearTimeout(page.reloadTimers.get(key));
  page.reloadTimers.set(key, setTimeout(() => action().catch((error) => showMessage(error.message)), 250));
}

// ---- formatting

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

function bytes(count) {
  if (count === undefined || count === null) return '';
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = count;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit += 1; }
  return `${value >= 100 || unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

function duration(seconds) {
  if (!seconds) return '';
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (hours > 0) return minutes > 0 ? `${hours}h ${minutes}m` : `${hours}h`;
  return minutes > 0 ? `${minutes}m` : `${seconds}s`;
}

function day(iso) { return iso ? dateFormat.format(new Date(iso)) : ''; }

function fileName(path) { return path ? path.slice(path.lastIndexOf('/') + 1) : ''; }

// ---- views

function show(view) {
  page.view = view;
  $('podcasts-view').hidden = view !== 'podcasts';
  $('podcast-view').hidden = view !== 'podcast';
  $('downloads-view').hidden = view !== 'downloads';
  for (const node of document.querySelectorAll('nav button')) {
    node.setAttribute('aria-pressed', String(node.dataset.view === view || (view === 'podcast' && node.dataset.view === 'podcasts')));
  }
}

async function loadStatus() {
  const status = await rpc('status');
  const parts = [`${status.podcasts.subscribed} podcasts`];
  const queue = status.downloads;
  if (queue.active) parts.push(`${queue.active} downloading at ${bytes(queue.rate)}/s`);
  if (queue.queued) parts.push(`${queue.queued} queued`);
  if (queue.paused) parts.push(`${queue.paused} paused`);
  if (queue.failed) parts.push(`${queue.failed} failed`);
  if (queue.gate && queue.gate.closed_because) parts.push(`downloads held: ${queue.gate.closed_because.replace('_', ' ')}`);
  $('status').textContent = parts.join(' · ');
  $('active-count').textContent = queue.active + queue.queued > 0 ? `(${queue.active + queue.queued})` : '';
}

async function loadPodcasts() {
  page.podcasts = (await rpc('podcasts')).podcasts;
  const list = $('podcasts');
  list.replaceChildren(...page.podcasts.map(podcastCard));
  $('no-podcasts').hidden = page.podcasts.length > 0;
}

function artwork(podcast) {
  const image = element('img');
  image.alt = '';
  image.loading = 'lazy';
  if (podcast.artwork_path) image.src = `/artwork/${podcast.id}`;
  return image;
}

function podcastCard(podcast) {
  const item = element('li');
  item.dataset.podcast = podcast.id;
  const link = element('a');
  link.href = `#podcast/${podcast.id}`;
  link.append(artwork(podcast));
  const text = element('div', 'text');
  text.append(element('span', 'title', podcast.title));
  const facts = [`${podcast.episodes} episodes`];
  if (podcast.new_episodes) facts.push(`${podcast.new_episodes} new`);
  if (podcast.gone) facts.push('feed gone');
  else if (podcast.last_error) facts.push('refresh failing');
  text.append(element('span', 'sub', facts.join(' · ')));
  link.append(text);
  item.append(link);
  return item;
}

async function openPodcast(id) {
  page.podcastID = id;
  show('podcast');
  const listing = await rpc('episodes', { podcast: String(id), brief: true, limit: 300 });
  if (page.podcastID !== id) return;
  const podcast = listing.podcast;
  page.episodes = listing.episodes;
  $('podcast-title').textContent = podcast.title;
  const facts = [podcast.author, `${podcast.episodes} episodes`, `auto-download ${podcast.auto_download}`];
  $('podcast-meta').textContent = facts.filter(Boolean).join(' · ');
  const image = $('podcast-artwork');
  if (podcast.artwork_path) image.src = `/artwork/${podcast.id}`; else image.removeAttribute('src');
  showPersonalFeed(podcast.id, $('feed-credentials').checked);
  renderEpisodes();
}

async function showPersonalFeed(id, withCredentials) {
  let url = `${origin}/feeds/${id}.xml`;
  let code = `/feeds/${id}.svg`;
  if (withCredentials) {
    const secret = await rpc('http_password');
    const withSecret = new URL(`/feeds/${id}.xml`, origin);
    withSecret.username = secret.user;
    withSecret.password = secret.password;
    url = withSecret.href;
    code += '?credentials=1';
  }
  $('feed-url').textContent = url;
  $('feed-qr').src = code;
}

function episodeRow(episode) {
  const item = element('li', episode.played_at ? 'played' : '');
  item.dataset.episode = episode.id;
  item.append(element('span', 'title', episode.title));
  const facts = [day(episode.published), duration(episode.duration_seconds)];
  if (episode.played_at) facts.push('played');
  else if (episode.new) facts.push('new');
  if (episode.download_state) facts.push(episode.download_state === 'completed' ? 'downloaded' : episode.download_state);
  else if (episode.skipped) facts.push(`skipped: ${episode.skipped}`);
  item.append(element('span', 'sub', facts.filter(Boolean).join(' · ')));
  const actions = element('span', 'actions');
  const download = episode.download_id ? page.downloads.get(episode.download_id) : undefined;
  if (!episode.download_state || episode.download_state === 'failed') {
    actions.append(button('Download', async () => {
      await rpc('enqueue', { episodes: [episode.id] });
      showMessage(`Queued "${episode.title}"`, true);
      await openPodcast(page.podcastID);
    }));
  }
  if (episode.played_at) {
    actions.append(button('Mark unplayed', async () => { await rpc('unplayed', { episodes: [episode.id] }); await openPodcast(page.podcastID); }));
  } else {
    actions.append(button('Mark played', async () => { await rpc('played', { episodes: [episode.id] }); await openPodcast(page.podcastID); }));
  }
  item.append(actions);
  if (download && download.state !== 'completed') item.append(progressBar(download));
  return item;
}

function renderEpisodes() {
  $('episodes').replaceChildren(...page.episodes.map(episodeRow));
}

function progressBar(download) {
  const bar = element('progress');
  setProgress(bar, download);
  bar.dataset.download = download.id;
  return bar;
}

function setProgress(bar, download) {
  const done = download.state === 'completed';
  bar.max = download.bytes_total || 1;
  bar.value = done ? bar.max : download.bytes_total ? download.bytes_done : 0;
  bar.setAttribute('aria-label', `${fileName(download.file)}: ${done ? '100 %' : percent(download)}`);
}

function percent(download) {
  if (!download.bytes_total) return bytes(download.bytes_done);
  return `${Math.floor((100 * download.bytes_done) / download.bytes_total)} %`;
}

async function loadDownloads() {
  const downloads = (await rpc('downloads')).downloads;
  page.downloads = new Map(downloads.map((download) => [download.id, download]));
  renderDownloads();
}

function renderDownloads() {
  const rows = [...page.downloads.values()].map(downloadRow);
  $('downloads').replaceChildren(...rows);
  $('no-downloads').hidden = rows.length > 0;
}

function downloadDescription(download) {
  const facts = [download.state === 'paused' && download.pause_reason ? `paused (${download.pause_reason.replace('_', ' ')})` : download.state];
  if (download.state === 'active') {
    facts.push(percent(download));
    if (download.speed) facts.push(`${bytes(download.speed)}/s`);
    if (download.eta_seconds) facts.push(`${duration(download.eta_seconds)} left`);
  } else if (download.bytes_total) {
    facts.push(bytes(download.bytes_total));
  }
  if (download.last_error && download.state !== 'completed') facts.push(download.last_error.message);
  return facts.join(' · ');
}

function downloadRow(download) {
  const item = element('li', `state-${download.state}`);
  item.dataset.download = download.id;
  item.append(element('span', 'title', download.episode_title || fileName(download.file)));
  item.append(element('span', 'sub', downloadDescription(download)));
  const actions = element('span', 'actions');
  const ids = { ids: [download.id] };
  if (download.state === 'queued' || download.state === 'active') {
    actions.append(button('Pause', () => rpc('pause', ids)));
  }
  if (download.state === 'paused') actions.append(button('Resume', () => rpc('resume', ids)));
  if (download.state === 'failed') actions.append(button('Retry', () => rpc('retry', ids)));
  if (download.state !== 'completed') {
    actions.append(button('Cancel', async () => {
      if (confirm(`Cancel ${fileName(download.file)} and delete its partial file?`)) await rpc('cancel', { ids: [download.id], delete_partial: true });
    }));
  }
  item.append(actions);
  item.append(progressBar(download));
  return item;
}

// A progress event changes one row in place; anything else redraws the list.
function applyDownloadEvent(method, download) {
  if (method === 'download.removed') page.downloads.delete(download.id);
  else page.downloads.set(download.id, download);
  if (method === 'download.progress') {
    for (const bar of document.querySelectorAll(`progress[data-download="${download.id}"]`)) setProgress(bar, download);
    const row = document.querySelector(`#downloads li[data-download="${download.id}"] .sub`);
    if (row) row.textContent = downloadDescription(download);
    return;
  }
  renderDownloads();
  if (page.view === 'podcast' && page.episodes.some((episode) => episode.download_id === download.id)) {
    reloadSoon('podcast', () => openPodcast(page.podcastID));
  }
  reloadSoon('status', loadStatus);
}

function listen() {
  const events = new EventSource(`${origin}/events?topics=downloads,podcasts,daemon`);
  events.onmessage = (message) => {
    let notification;
    try {
      notification = JSON.parse(message.data);
    } catch {
      return;
    }
    const method = notification.method || '';
    const params = notification.params || {};
    if (method.startsWith('download.') && params.download) {
      applyDownloadEvent(method, params.download);
    } else if (method.startsWith('podcast.') || method.startsWith('episode.')) {
      reloadSoon('podcasts', loadPodcasts);
      if (page.view === 'podcast') reloadSoon('podcast', () => openPodcast(page.podcastID));
    } else if (method === 'events.dropped') {
      reloadSoon('downloads', loadDownloads);
    } else if (method === 'daemon.stopping') {
      $('status').textContent = 'The daemon is stopping…';
    }
  };
  events.onerror = () => { $('status').textContent = 'Reconnecting to the daemon…'; };
  events.onopen = () => { loadStatus().catch(() => {}); loadDownloads().catch(() => {}); };
}

// ---- search and subscribe

async function search(term) {
  const result = await rpc('search', { term, limit: 25 });
  const list = $('search-results');
  list.replaceChildren(...result.podcasts.map(searchCard));
  if (result.podcasts.length === 0) list.append(element('li', 'sub', `Nothing found for "${term}".`));
  $('search-view').hidden = false;
}

function searchCard(found) {
  const item = element('li');
  const image = element('img');
  image.alt = '';
  image.loading = 'lazy';
  image.referrerPolicy = 'no-referrer';
  if (found.artwork_url && found.artwork_url.startsWith('https://')) image.src = found.artwork_url;
  item.append(image);
  const text = element('div', 'text');
  text.append(element('span', 'title', found.title));
  text.append(element('span', 'sub', [found.author, found.genre].filter(Boolean).join(' · ')));
  if (found.subscribable) {
    text.append(button('Subscribe', () => subscribe({ itunes_id: found.id }, found.title)));
  } else {
    text.append(element('span', 'sub', 'no public feed'));
  }
  item.append(text);
  return item;
}

async function subscribe(params, title) {
  const result = await rpc('subscribe', params);
  const podcast = result.podcast;
  $('search-view').hidden = true;
  showMessage(result.existing ? `Already subscribed to "${podcast.title}"` : `Subscribed to "${podcast.title || title}"`, true);
  await loadPodcasts();
  location.hash = `#podcast/${podcast.id}`;
}

// ---- start

function route() {
  const match = /^#podcast\/(\d+)$/.exec(location.hash);
  if (match) return openPodcast(Number(match[1]));
  if (location.hash === '#downloads') { show('downloads'); return loadDownloads(); }
  show('podcasts');
  return loadPodcasts();
}

function start() {
  $('search-form').addEventListener('submit', (event) => {
    event.preventDefault();
    search($('search-term').value.trim()).catch((error) => showMessage(error.message));
  });
  $('subscribe-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const url = $('subscribe-url').value.trim();
    subscribe({ url }, url).then(() => { $('subscribe-url').value = ''; }).catch((error) => showMessage(error.message));
  });
  $('close-search').addEventListener('click', () => { $('search-view').hidden = true; });
  $('back').addEventListener('click', () => { location.hash = ''; });
  for (const node of document.querySelectorAll('nav button')) {
    node.addEventListener('click', () => { location.hash = node.dataset.view === 'downloads' ? '#downloads' : ''; });
  }
  $('feed-credentials').addEventListener('change', (event) => {
    showPersonalFeed(page.podcastID, event.target.checked).catch((error) => showMessage(error.message));
  });
  window.addEventListener('hashchange', () => route().catch((error) => showMessage(error.message)));
  session()
    .then(() => Promise.all([route(), loadStatus(), loadDownloads()]))
    .then(listen)
    .catch((error) => showMessage(error.message));
}

document.addEventListener('DOMContentLoaded', start);
