/* global document, window, fetch, location, navigator, confirm, prompt, FormData, URLSearchParams */
// The operator console: calls the operator API (/admin/v1/*) with the session cookie and the
// header that marks the console's own requests. Every value from the API reaches the page as
// text (textContent, attributes), never as HTML.

const CSRF = { 'x-requested-with': 'notify-console' };
const PAGE_SIZE = 100;

const $ = (selector) => document.querySelector(selector);

class ApiError extends Error {
  constructor(status, message, loggedOut = false) {
    super(message);
    this.status = status;
    this.loggedOut = loggedOut;
  }
}

/** One operator API call; throws ApiError with the API's own message. */
async function api(method, path, body) {
  const headers = { ...CSRF, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 401) {
    // The session ended (expired, logged out elsewhere, token changed).
    throw new ApiError(401, 'Your session has ended: log in again.', true);
  }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, describeError(data, response.status));
  return data;
}

function describeError(data, status) {
  if (data && typeof data.message === 'string') return data.message;
  if (data && (data.details || (Array.isArray(data.parameters) && data.parameters.length))) {
    const fields = (data.parameters || []).map((p) => `${p.param}: ${(p.details || []).join(' ')}`);
    return [data.details, ...fields].filter(Boolean).join(' ');
  }
  return `The request failed (HTTP ${status}).`;
}

/** Builds an element; children are nodes or strings (added as text). */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (name === 'className') node.className = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof window.Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function fill(tbody, rows, emptyText, columns) {
  tbody.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: columns, className: 'meta' }, emptyText))]));
}

const dateText = (iso) => (iso ? new Date(iso).toLocaleString() : '');

function showError(error) {
  const box = $('#error');
  box.textContent = error instanceof ApiError ? `Error ${error.status}: ${error.message}` : `Error: ${error.message}`;
  if (error instanceof ApiError && error.loggedOut) {
    box.append(' ', el('a', { href: `/admin/login?next=${encodeURIComponent(location.pathname)}` }, 'Log in'));
  }
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest' });
}

function clearError() {
  $('#error').hidden = true;
  $('#error').textContent = '';
}

/** Runs an action, showing its failure; returns whether it succeeded. */
async function attempt(action) {
  clearError();
  try {
    await action();
    return true;
  } catch (error) {
    showError(error);
    return false;
  }
}

const state = { orgId: null, organizations: [], rulesPage: 1, ruleName: '', ruleId: null };

function selectedOrgFromHash() {
  const match = /^#org=([\w-]+)$/.exec(location.hash);
  return match ? match[1] : null;
}

// Organizations

async function loadOrganizations() {
  state.organizations = await api('GET', '/admin/v1/organizations');
  const rows = state.organizations.map((org) =>
    el('tr', { className: org.id === state.orgId ? 'selected' : undefined },
      el('td', {}, org.name),
      el('td', {}, org.timezone),
      el('td', {}, `${org.plan.groups.join(', ')} · ${org.plan.rate_limit_per_second}/s, ${org.plan.rate_limit_per_minute}/min`),
      el('td', { className: 'mono' }, org.id),
      el('td', { className: 'actions' },
        el('a', { href: `#org=${org.id}`, 'aria-label': `Open organization ${org.name}` }, 'Open'))));
  fill($('#orgs tbody'), rows, 'No organizations yet.', 5);
}

$('#org-create').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const data = new FormData(form);
  let created;
  const ok = await attempt(async () => {
    const body = { name: String(data.get('name')) };
    if (String(data.get('timezone') || '').trim()) body.timezone = String(data.get('timezone')).trim();
    created = await api('POST', '/admin/v1/organizations', body);
  });
  if (ok) {
    form.reset();
    location.hash = `#org=${created.id}`;
  }
});

async function openOrganization(orgId) {
  state.orgId = orgId;
  state.rulesPage = 1;
  state.ruleName = '';
  state.ruleId = null;
  $('#rule-filter').reset();
  $('#new-key').hidden = true;
  $('#new-key').replaceChildren();
  $('#deliveries').hidden = true;
  if (!orgId) {
    $('#org').hidden = true;
    await attempt(loadOrganizations);
    return;
  }
  await attempt(async () => {
    const [org] = await Promise.all([api('GET', `/admin/v1/organizations/${encodeURIComponent(orgId)}`), loadOrganizations()]);
    $('#org-title').textContent = org.name;
    $('#org-meta').textContent = `ID ${org.id} · time zone ${org.timezone} · plan: ${org.plan.groups.join(', ')}, ${org.plan.rate_limit_per_second} requests/s, ${org.plan.rate_limit_per_minute}/min, ${org.plan.monthly_quota} lookups/month per key, up to ${org.plan.max_rules} rules`;
    $('#org').hidden = false;
    await Promise.all([loadMembers(), loadKeys(), loadRules()]);
  });
}

const orgPath = (suffix = '') => `/admin/v1/organizations/${encodeURIComponent(state.orgId)}${suffix}`;

// Members

async function loadMembers() {
  const members = await api('GET', orgPath('/members'));
  const rows = members.map((member) =>
    el('tr', {},
      el('td', {}, member.email),
      el('td', {}, member.name ?? ''),
      el('td', { className: 'mono' }, member.team_member_uuid),
      el('td', {}, clockText(member)),
      // A bouncing address: its e-mails are suppressed until cleared (docs/api-guide.md: bounces).
      el('td', member.bouncing ? { title: member.bouncing.reply ?? '' } : {},
        member.bouncing ? `Bouncing since ${new Date(member.bouncing.since).toLocaleString()}` : 'OK'),
      el('td', { className: 'actions' },
        ...(member.bouncing
          ? [el('button', {
              type: 'button', 'aria-label': `Clear the bounce of ${member.email}`,
              onclick: () => clearBounce(member),
            }, 'Clear bounce')]
          : []),
        el('button', {
          type: 'button', 'aria-label': `Set the clock of ${member.email}`,
          onclick: () => setClock(member),
        }, 'Clock…'),
        el('button', {
          type: 'button', className: 'danger', 'aria-label': `Remove member ${member.email}`,
          onclick: () => removeMember(member),
        }, 'Remove'))));
  fill($('#members tbody'), rows, 'No members yet.', 6);
}

// "Asia/Tokyo · quiet 22–7": the member's time zone (or the organization's) and quiet hours.
function clockText(member) {
  const zone = member.timezone ?? 'organization\'s zone';
  return member.quiet_hours ? `${zone} · quiet ${member.quiet_hours.start_hour}–${member.quiet_hours.end_hour}` : zone;
}

// "22-7" -> { start_hour: 22, end_hour: 7 }; "" -> null (none). Anything else goes to the API, which explains.
function parseQuietHours(text) {
  const value = text.trim();
  if (value === '') return null;
  const hours = /^(\d{1,2})-(\d{1,2})$/.exec(value);
  return hours ? { start_hour: Number(hours[1]), end_hour: Number(hours[2]) } : { start_hour: value, end_hour: value };
}

async function setClock(member) {
  const zone = prompt(`Time zone of ${member.email} (an IANA name such as Asia/Tokyo; empty: the organization's)`, member.timezone ?? '');
  if (zone === null) return;
  const quiet = prompt('Quiet hours START-END in that zone (such as 22-7; empty: none)',
    member.quiet_hours ? `${member.quiet_hours.start_hour}-${member.quiet_hours.end_hour}` : '');
  if (quiet === null) return;
  await attempt(async () => {
    await api('PATCH', orgPath(`/members/${encodeURIComponent(member.team_member_uuid)}`), {
      timezone: zone.trim() || null, quiet_hours: parseQuietHours(quiet),
    });
    await loadMembers();
  });
}

async function clearBounce(member) {
  await attempt(async () => {
    await api('POST', orgPath(`/members/${encodeURIComponent(member.team_member_uuid)}/clear-bounce`));
    await loadMembers();
  });
}

async function removeMember(member) {
  if (!confirm(`Remove ${member.email}? They are also taken off every rule.`)) return;
  await attempt(async () => {
    await api('DELETE', orgPath(`/members/${encodeURIComponent(member.team_member_uuid)}`));
    await Promise.all([loadMembers(), loadRules()]);
  });
}

$('#member-add').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const data = new FormData(form);
  const ok = await attempt(async () => {
    const body = { email: String(data.get('email')).trim() };
    if (String(data.get('name') || '').trim()) body.name = String(data.get('name')).trim();
    if (String(data.get('timezone') || '').trim()) body.timezone = String(data.get('timezone')).trim();
    if (String(data.get('quiet_hours') || '').trim()) body.quiet_hours = parseQuietHours(String(data.get('quiet_hours')));
    await api('POST', orgPath('/members'), body);
    await loadMembers();
  });
  if (ok) form.reset();
});

// API keys

async function loadKeys() {
  const keys = await api('GET', orgPath('/api-keys'));
  const rows = keys.map((key) => keyRow(key));
  fill($('#keys tbody'), rows, 'No keys yet.', 5);
}

function keyRow(key) {
  const nameCell = el('td', {}, key.name);
  const row = el('tr', { 'data-key-id': key.id },
    nameCell,
    el('td', { className: 'mono' }, `${key.prefix}…`),
    el('td', {}, key.is_default ? el('span', { className: 'badge default' }, 'default') : ''),
    el('td', {}, dateText(key.added_date)),
    el('td', { className: 'actions' },
      el('button', { type: 'button', 'aria-label': `Rename key ${key.name}`, onclick: () => renameKey(key, nameCell) }, 'Rename'), ' ',
      key.is_default ? '' : el('button', { type: 'button', 'aria-label': `Make key ${key.name} the default`, onclick: () => makeDefault(key) }, 'Make default'), ' ',
      el('button', { type: 'button', className: 'danger', 'aria-label': `Delete key ${key.name}`, onclick: () => deleteKey(key) }, 'Delete')));
  return row;
}

function renameKey(key, cell) {
  const input = el('input', { name: 'name', value: key.name, required: true, maxlength: 255, 'aria-label': `New name for key ${key.name}` });
  const form = el('form', { className: 'inline', onsubmit: async (event) => {
    event.preventDefault();
    await attempt(async () => {
      await api('PATCH', orgPath(`/api-keys/${encodeURIComponent(key.id)}`), { name: input.value });
      await loadKeys();
    });
  } }, input, el('button', { type: 'submit' }, 'Save'), el('button', { type: 'button', onclick: () => attempt(loadKeys) }, 'Cancel'));
  cell.replaceChildren(form);
  input.focus();
  input.select();
}

async function makeDefault(key) {
  await attempt(async () => {
    await api('PATCH', orgPath(`/api-keys/${encodeURIComponent(key.id)}`), { is_default: true });
    await Promise.all([loadKeys(), loadOrganizations()]);
  });
}

async function deleteKey(key) {
  if (!confirm(`Delete the key "${key.name}"? Clients using it stop working at once.`)) return;
  await attempt(async () => {
    await api('DELETE', orgPath(`/api-keys/${encodeURIComponent(key.id)}`));
    await loadKeys();
  });
}

$('#key-generate').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const data = new FormData(form);
  let generated;
  const ok = await attempt(async () => {
    generated = await api('POST', orgPath('/api-keys'), { name: String(data.get('name')) });
    await loadKeys();
  });
  if (!ok) return;
  form.reset();
  const code = el('code', { id: 'new-key-value' }, generated.key);
  const notice = $('#new-key');
  notice.replaceChildren(
    el('p', {}, el('strong', {}, `New key "${generated.name}"${generated.is_default ? ' (the default key)' : ''}: `), code),
    el('p', {}, 'Copy it now. It is shown this once and cannot be shown again: only its hash is stored.'),
    el('button', { type: 'button', onclick: () => navigator.clipboard?.writeText(generated.key).catch(() => {}) }, 'Copy key'), ' ',
    el('button', { type: 'button', onclick: () => { notice.hidden = true; notice.replaceChildren(); } }, 'I have copied it'));
  notice.hidden = false;
});

// Rules and their deliveries

async function loadRules() {
  const query = new URLSearchParams({ ordering: 'name', page: String(state.rulesPage), page_size: String(PAGE_SIZE) });
  if (state.ruleName) query.set('name__contains', state.ruleName);
  const list = await api('GET', orgPath(`/notification-rules?${query}`));
  const rows = list.results.map((rule) =>
    el('tr', { className: rule.id === state.ruleId ? 'selected' : undefined },
      el('td', {}, rule.name),
      el('td', { className: 'mono' }, rule.scope),
      el('td', {}, rule.frequency),
      el('td', {}, rule.enabled ? 'yes' : 'no'),
      el('td', {},
        `${rule.deliveries.sent} sent`,
        rule.deliveries.failed ? [' · ', el('span', { className: 'badge failed' }, `${rule.deliveries.failed} failed`)] : '',
        rule.deliveries.pending + rule.deliveries.sending ? ` · ${rule.deliveries.pending + rule.deliveries.sending} on the way` : ''),
      el('td', { className: 'actions' },
        el('button', { type: 'button', 'aria-label': `Deliveries of rule ${rule.name}`, onclick: () => openDeliveries(rule) }, 'Deliveries'), ' ',
        el('button', { type: 'button', 'aria-label': `Send pending matches of rule ${rule.name} now`, onclick: () => flushRule(rule) }, 'Send now'))));
  fill($('#rules tbody'), rows, state.ruleName ? 'No rule matches.' : 'No rules yet.', 6);
  const pages = Math.max(1, Math.ceil(list.result_count / PAGE_SIZE));
  const pager = $('#rules-pager');
  pager.replaceChildren(
    `${list.result_count} rule${list.result_count === 1 ? '' : 's'}`,
    pages > 1 ? [
      el('button', { type: 'button', disabled: state.rulesPage <= 1, onclick: () => { state.rulesPage--; attempt(loadRules); } }, 'Previous'),
      `page ${state.rulesPage} of ${pages}`,
      el('button', { type: 'button', disabled: state.rulesPage >= pages, onclick: () => { state.rulesPage++; attempt(loadRules); } }, 'Next'),
    ] : '');
}

$('#rule-filter').addEventListener('submit', async (event) => {
  event.preventDefault();
  state.ruleName = String(new FormData(event.currentTarget).get('name') || '').trim();
  state.rulesPage = 1;
  await attempt(loadRules);
});

async function flushRule(rule) {
  await attempt(async () => {
    const result = await api('POST', `/admin/v1/notification-rules/${encodeURIComponent(rule.id)}/flush`);
    await loadRules();
    if (state.ruleId === rule.id) await loadDeliveries(rule);
    $('#deliveries-meta').textContent = `Sent now: ${result.matches} pending match${result.matches === 1 ? '' : 'es'} in ${result.deliveries} deliver${result.deliveries === 1 ? 'y' : 'ies'}.`;
  });
}

async function openDeliveries(rule) {
  state.ruleId = rule.id;
  await attempt(async () => {
    await Promise.all([loadDeliveries(rule), loadRules()]);
    $('#deliveries').hidden = false;
    $('#deliveries-title').focus?.();
  });
}

async function loadDeliveries(rule) {
  const list = await api('GET', `/admin/v1/notification-rules/${encodeURIComponent(rule.id)}/deliveries`);
  $('#deliveries-title').textContent = `Deliveries of "${rule.name}"`;
  const silenced = list.silenced_matches ? ` · ${list.silenced_matches} held back by silences` : '';
  $('#deliveries-meta').textContent = `${list.pending_matches} match${list.pending_matches === 1 ? '' : 'es'} waiting for the next delivery${silenced} · newest first, the last 50`;
  const rows = list.results.map((delivery) =>
    el('tr', { 'data-delivery-id': delivery.id },
      el('td', {}, el('span', { className: `badge ${delivery.status}` }, delivery.status)),
      el('td', {}, delivery.email),
      el('td', { className: 'mono' }, delivery.period),
      el('td', {}, delivery.event_count),
      el('td', {}, delivery.attempts),
      el('td', { className: 'error-text' }, delivery.last_error ?? ''),
      el('td', {}, dateText(delivery.sent_date ?? delivery.last_update_date)),
      el('td', { className: 'actions' },
        delivery.status === 'failed' || delivery.status === 'cancelled'
          ? el('button', { type: 'button', 'aria-label': `Retry delivery to ${delivery.email}`, onclick: () => retryDelivery(rule, delivery) }, 'Retry')
          : '')));
  fill($('#deliveries-table tbody'), rows, 'No deliveries yet.', 8);
}

async function retryDelivery(rule, delivery) {
  await attempt(async () => {
    await api('POST', `/admin/v1/deliveries/${encodeURIComponent(delivery.id)}/retry`);
    await Promise.all([loadDeliveries(rule), loadRules()]);
  });
}

window.addEventListener('hashchange', () => openOrganization(selectedOrgFromHash()));
$('#deliveries-title').setAttribute('tabindex', '-1');
openOrganization(selectedOrgFromHash());
