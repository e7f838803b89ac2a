import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestOrg } from '../support/app';
import { pause } from '../support/wait';

const RULES = '/v1/platform/notification-rules';
const DOCS = 'https://docs.example.test/notification-rules';
const DATETIME_MESSAGE = 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].';
const SUMMARY_FIELDS = ['id', 'name', 'scope', 'frequency', 'delivery_hour', 'delivery_day_of_week', 'members', 'enabled', 'renotify_after_hours', 'added_date', 'last_update_date'].sort();

interface Item {
  id: string;
  name: string;
  scope: string;
  frequency: string;
  enabled: boolean;
  members: Array<{ team_member_uuid: string; email: string }>;
  added_date: string;
  last_update_date: string;
  [key: string]: unknown;
}

interface Page {
  page: number;
  page_size: number;
  result_count: number;
  results: Item[];
}


/** `date` written in the zone `offsetMinutes` from UTC, e.g. 2026-11-20T12:15:00.123+02:00. */
function withOffset(date: string, offsetMinutes: number): string {
  const shifted = new Date(Date.parse(date) + offsetMinutes * 60_000).toISOString().slice(0, -1);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${shifted}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

describe('GET /v1/platform/notification-rules (list)', () => {
  let t: TestApp;
  let org: TestOrg;
  // Fixture rules, keyed by a short label; created one after another so added_date increases.
  const rules: Record<string, Item> = {};
  const m = (i: number) => org.members[i]!.team_member_uuid;

  const list = async (query = ''): Promise<Page> => {
    const response = await t.api(org.key, 'GET', `${RULES}${query ? `?${query}` : ''}`);
    expect(response.statusCode, `${query}: ${response.body}`).toBe(200);
    return response.json();
  };
  /** Labels of the fixture rules the query returns, in answer order. */
  const labels = async (query = '') => {
    const page = await list(query);
    const byId = new Map(Object.entries(rules).map(([label, rule]) => [rule.id, label]));
    const found = page.results.map((item) => byId.get(item.id) ?? `unknown:${item.id}`);
    expect(page.result_count, query).toBe(found.length);
    return found;
  };
  const sorted = (values: string[]) => [...values].sort();

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrg({ memberCount: 4 });
    const fixtures: Array<[string, Record<string, unknown>]> = [
      ['alpha', { name: 'alpha ports', scope: 'new_open_port_detected', frequency: 'instant', members: [m(0)], enabled: true }],
      ['beta', { name: 'beta SSL 100%', scope: 'asset_ssl_changed', frequency: 'daily', members: [m(1)], enabled: false }],
      ['gamma', { name: 'gamma_dns', scope: 'asset_dns_changed', frequency: 'weekly', members: [m(0), m(2)], enabled: true }],
      ['delta', { name: 'delta 100 percent', scope: 'new_open_port_detected', frequency: 'monthly', members: [m(2)], enabled: false }],
      ['epsilon', { name: 'epsilon GAMMAxdns', scope: 'new_issue_detected', frequency: 'hourly', members: [m(3)], enabled: true }],
      ['zeta', { name: 'Zeta', scope: 'asset_ssl_changed', frequency: 'instant', members: [m(1), m(3)], enabled: true }],
    ];
    for (const [label, body] of fixtures) {
      const response = await t.api(org.key, 'POST', RULES, { strategy: { must: [{ name: 'severity', type: 'gte', value: 'high' }] }, ...body });
      expect(response.statusCode, response.body).toBe(201);
      rules[label] = response.json();
      await pause(5); // a later added_date for the next rule
    }
    // beta is updated last, so it has the newest last_update_date.
    const updated = await t.api(org.key, 'PUT', `${RULES}/${rules.beta!.id}`, { name: 'beta SSL 100%', members: [m(1)], enabled: false });
    expect(updated.statusCode, updated.body).toBe(200);
    rules.beta = updated.json();
  });
  afterAll(async () => t.close());

  describe('envelope and items', () => {
    it('answers {page, page_size, result_count, results} with the defaults page 1 and page_size 100', async () => {
      const response = await t.api(org.key, 'GET', RULES);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['page', 'page_size', 'result_count', 'results']);
      expect(body).toMatchObject({ page: 1, page_size: 100, result_count: 6 });
      expect(body.results).toHaveLength(6);
    });

    it('gives each item every resource field except strategy, as the create answer gave them', async () => {
      const page = await list();
      for (const item of page.results) {
        expect(Object.keys(item).sort()).toEqual(SUMMARY_FIELDS);
        expect(item).not.toHaveProperty('strategy');
        const created = Object.values(rules).find((rule) => rule.id === item.id)!;
        const { strategy: _strategy, ...summary } = created;
        expect({ ...item, members: sorted(item.members.map((x) => JSON.stringify(x))) }).toEqual({
          ...summary,
          members: sorted(created.members.map((x) => JSON.stringify(x))),
        });
      }
    });

    it('orders by -added_date by default', async () => {
      expect(await labels()).toEqual(['zeta', 'epsilon', 'delta', 'gamma', 'beta', 'alpha']);
    });

    it('echoes page and page_size', async () => {
      expect(await list('page=2&page_size=25')).toMatchObject({ page: 2, page_size: 25, result_count: 6, results: [] });
    });
  });

  describe('filters', () => {
    it.each([
      ['name__contains=GAMMA', ['epsilon', 'gamma']],
      ['name__contains=ssl', ['beta']],
      ['name__contains=a_d', ['gamma']],
      ['name__contains=100%25', ['beta']],
      ['name__contains=%25', ['beta']],
      ['name__contains=_', ['gamma']],
      ['name__contains=nothing-like-this', []],
      ['name__not_contains=GAMMA', ['zeta', 'delta', 'beta', 'alpha']],
      ['name__not_contains=a_d', ['zeta', 'epsilon', 'delta', 'beta', 'alpha']],
      ['name__not_contains=100%25', ['zeta', 'epsilon', 'delta', 'gamma', 'alpha']],
      ['name__contains=a&name__not_contains=ETA', ['epsilon', 'delta', 'gamma', 'alpha']],
    ])('%s', async (query, expected) => {
      expect(await labels(query)).toEqual(expected);
    });

    it.each([
      ['scope__in=asset_ssl_changed,asset_dns_changed', ['zeta', 'gamma', 'beta']],
      ['scope__in=asset_ssl_changed&scope__in=asset_dns_changed', ['zeta', 'gamma', 'beta']],
      ['scope__in=new_issue_detected', ['epsilon']],
      ['scope__in=new_cybersecurity_news_added', []],
      ['scope__nin=new_open_port_detected', ['zeta', 'epsilon', 'gamma', 'beta']],
      ['scope__nin=new_open_port_detected,asset_ssl_changed', ['epsilon', 'gamma']],
      ['scope__nin=new_open_port_detected&scope__nin=asset_ssl_changed', ['epsilon', 'gamma']],
      ['scope__in=asset_ssl_changed,new_open_port_detected&scope__nin=new_open_port_detected', ['zeta', 'beta']],
      ['frequency__in=daily,weekly', ['gamma', 'beta']],
      ['frequency__in=instant', ['zeta', 'alpha']],
      ['frequency__in=hourly&frequency__in=monthly', ['epsilon', 'delta']],
      ['frequency__nin=instant', ['epsilon', 'delta', 'gamma', 'beta']],
      ['frequency__nin=instant,hourly,daily', ['delta', 'gamma']],
    ])('%s', async (query, expected) => {
      expect(await labels(query)).toEqual(expected);
    });

    it('members__in and members__nin, comma-separated and repeated', async () => {
      expect(await labels(`members__in=${m(0)}`)).toEqual(['gamma', 'alpha']);
      expect(await labels(`members__in=${m(0)},${m(3)}`)).toEqual(['zeta', 'epsilon', 'gamma', 'alpha']);
      expect(await labels(`members__in=${m(0)}&members__in=${m(3)}`)).toEqual(['zeta', 'epsilon', 'gamma', 'alpha']);
      expect(await labels(`members__in=${m(2).toUpperCase()}`)).toEqual(['delta', 'gamma']);
      expect(await labels(`members__nin=${m(0)}`)).toEqual(['zeta', 'epsilon', 'delta', 'beta']);
      expect(await labels(`members__nin=${m(1)},${m(3)}`)).toEqual(['delta', 'gamma', 'alpha']);
      expect(await labels(`members__nin=${m(1)}&members__nin=${m(3)}`)).toEqual(['delta', 'gamma', 'alpha']);
      expect(await labels(`members__in=${m(0)}&members__nin=${m(2)}`)).toEqual(['alpha']);
      // A well-formed UUID that is no member here filters everything out rather than failing.
      expect(await labels('members__in=00000000-0000-4000-8000-000000000000')).toEqual([]);
    });

    it.each(['true', 'TRUE', 'True', '1'])('enabled=%s keeps the enabled rules', async (value) => {
      expect(await labels(`enabled=${value}`)).toEqual(['zeta', 'epsilon', 'gamma', 'alpha']);
    });

    it.each(['false', 'FALSE', 'False', '0'])('enabled=%s keeps the disabled rules', async (value) => {
      expect(await labels(`enabled=${value}`)).toEqual(['delta', 'beta']);
    });

    it('combines filters with AND', async () => {
      expect(await labels('scope__in=asset_ssl_changed&enabled=false')).toEqual(['beta']);
      expect(await labels(`enabled=true&frequency__in=instant&members__in=${m(1)}`)).toEqual(['zeta']);
      expect(await labels('enabled=true&name__contains=beta')).toEqual([]);
    });

    it('added_date__gte / __lte are inclusive bounds', async () => {
      const gamma = rules.gamma!.added_date;
      expect(await labels(`added_date__gte=${gamma}`)).toEqual(['zeta', 'epsilon', 'delta', 'gamma']);
      expect(await labels(`added_date__lte=${gamma}`)).toEqual(['gamma', 'beta', 'alpha']);
      expect(await labels(`added_date__gte=${gamma}&added_date__lte=${gamma}`)).toEqual(['gamma']);
      const after = new Date(Date.parse(gamma) + 1).toISOString();
      expect(await labels(`added_date__gte=${after}`)).toEqual(['zeta', 'epsilon', 'delta']);
      expect(await labels(`added_date__gte=${rules.beta!.added_date}&added_date__lte=${rules.delta!.added_date}`)).toEqual(['delta', 'gamma', 'beta']);
    });

    it('reads dates written with an offset, whether its + is escaped or not', async () => {
      const gamma = rules.gamma!.added_date;
      const plus = withOffset(gamma, 120);
      const minus = withOffset(gamma, -330);
      expect(plus).toMatch(/\+02:00$/);
      expect(await labels(`added_date__gte=${encodeURIComponent(plus)}`)).toEqual(['zeta', 'epsilon', 'delta', 'gamma']);
      expect(await labels(`added_date__lte=${encodeURIComponent(plus)}`)).toEqual(['gamma', 'beta', 'alpha']);
      // An unescaped + arrives as a space; it is read back as +.
      expect(await labels(`added_date__gte=${plus}`)).toEqual(['zeta', 'epsilon', 'delta', 'gamma']);
      expect(await labels(`added_date__lte=${encodeURIComponent(minus)}`)).toEqual(['gamma', 'beta', 'alpha']);
      // The same instant in another zone, one millisecond later, excludes gamma.
      const laterPlus = withOffset(new Date(Date.parse(gamma) + 1).toISOString(), 120);
      expect(await labels(`added_date__gte=${encodeURIComponent(laterPlus)}`)).toEqual(['zeta', 'epsilon', 'delta']);
    });

    it('accepts a plain date, seconds without a fraction and microseconds', async () => {
      expect(await labels('added_date__gte=2000-01-01')).toHaveLength(6);
      expect(await labels('added_date__lte=2000-01-01')).toEqual([]);
      expect(await labels('added_date__lte=2999-12-31T23:59:59Z')).toHaveLength(6);
      expect(await labels('added_date__gte=2999-12-31T23:59')).toEqual([]);
      expect(await labels('added_date__gte=2000-01-01T00:00:00.123456Z')).toHaveLength(6);
    });

    it('last_update_date__gte / __lte follow updates, not creation', async () => {
      const beta = rules.beta!.last_update_date;
      expect(Date.parse(beta)).toBeGreaterThan(Date.parse(rules.zeta!.last_update_date));
      expect(await labels(`last_update_date__gte=${beta}`)).toEqual(['beta']);
      const before = new Date(Date.parse(beta) - 1).toISOString();
      expect(await labels(`last_update_date__lte=${before}`)).toEqual(['zeta', 'epsilon', 'delta', 'gamma', 'alpha']);
      expect(await labels(`last_update_date__lte=${encodeURIComponent(withOffset(before, 60))}`)).toEqual(['zeta', 'epsilon', 'delta', 'gamma', 'alpha']);
      // added_date and last_update_date are separate: beta was added second.
      expect(await labels(`added_date__gte=${rules.gamma!.added_date}&last_update_date__gte=${beta}`)).toEqual([]);
    });
  });

  describe('ordering', () => {
    it.each([
      ['name', ['alpha', 'beta', 'delta', 'epsilon', 'gamma', 'zeta']],
      ['-name', ['zeta', 'gamma', 'epsilon', 'delta', 'beta', 'alpha']],
      ['added_date', ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta']],
      ['-added_date', ['zeta', 'epsilon', 'delta', 'gamma', 'beta', 'alpha']],
      ['last_update_date', ['alpha', 'gamma', 'delta', 'epsilon', 'zeta', 'beta']],
      ['-last_update_date', ['beta', 'zeta', 'epsilon', 'delta', 'gamma', 'alpha']],
    ])('ordering=%s', async (ordering, expected) => {
      expect(await labels(`ordering=${ordering}`)).toEqual(expected);
    });

    it('ordering=scope sorts the scope values alphabetically, and -scope reverses it', async () => {
      const asc = await list('ordering=scope,name');
      expect(asc.results.map((r) => r.scope)).toEqual([
        'asset_dns_changed', 'asset_ssl_changed', 'asset_ssl_changed', 'new_issue_detected', 'new_open_port_detected', 'new_open_port_detected',
      ]);
      const desc = await list('ordering=-scope,name');
      expect(desc.results.map((r) => r.scope)).toEqual([
        'new_open_port_detected', 'new_open_port_detected', 'new_issue_detected', 'asset_ssl_changed', 'asset_ssl_changed', 'asset_dns_changed',
      ]);
    });

    it('ordering=frequency sorts the frequency values alphabetically, and -frequency reverses it', async () => {
      expect((await list('ordering=frequency,name')).results.map((r) => r.frequency)).toEqual(['daily', 'hourly', 'instant', 'instant', 'monthly', 'weekly']);
      expect((await list('ordering=-frequency,name')).results.map((r) => r.frequency)).toEqual(['weekly', 'monthly', 'instant', 'instant', 'hourly', 'daily']);
    });

    it('ordering=enabled puts false first, -enabled true first', async () => {
      expect(await labels('ordering=enabled,name')).toEqual(['beta', 'delta', 'alpha', 'epsilon', 'gamma', 'zeta']);
      expect(await labels('ordering=-enabled,name')).toEqual(['alpha', 'epsilon', 'gamma', 'zeta', 'beta', 'delta']);
    });

    it('orders by several fields, the first one first', async () => {
      expect(await labels('ordering=scope,-name')).toEqual(['gamma', 'zeta', 'beta', 'epsilon', 'delta', 'alpha']);
      expect(await labels('ordering=-enabled,-added_date')).toEqual(['zeta', 'epsilon', 'gamma', 'alpha', 'delta', 'beta']);
      expect(await labels('ordering=frequency,-added_date')).toEqual(['beta', 'epsilon', 'zeta', 'alpha', 'delta', 'gamma']);
      expect(await labels('ordering=frequency&ordering=-added_date')).toEqual(['beta', 'epsilon', 'zeta', 'alpha', 'delta', 'gamma']);
    });

    it('orders names without regard to case', async () => {
      // "Zeta" is the only name with a capital first letter; byte order would put it first.
      expect((await labels('ordering=name'))[5]).toBe('zeta');
    });

    it('applies ordering together with filters', async () => {
      expect(await labels('ordering=name&enabled=false')).toEqual(['beta', 'delta']);
      expect(await labels('ordering=-name&scope__in=new_open_port_detected,asset_ssl_changed')).toEqual(['zeta', 'delta', 'beta', 'alpha']);
    });
  });

  describe('invalid parameters', () => {
    async function expectRejected(query: string, param: string, details?: string[]) {
      const response = await t.api(org.key, 'GET', `${RULES}?${query}`);
      expect(response.statusCode, `${query}: ${response.body}`).toBe(400);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = response.json();
      expect(body).toMatchObject({ code: 10400, details: null, solution: DOCS });
      expect(body.parameters.map((p: { param: string }) => p.param), query).toEqual([param]);
      if (details) expect(body.parameters[0].details, query).toEqual(details);
    }

    it.each([
      ['ordering=colour', 'ordering', ['"colour" is not a valid choice.']],
      ['ordering=name,-colour', 'ordering', ['"-colour" is not a valid choice.']],
      ['ordering=strategy', 'ordering', ['"strategy" is not a valid choice.']],
      ['ordering=members', 'ordering', undefined],
      ['scope__in=nope', 'scope__in', ['"nope" is not a valid choice.']],
      ['scope__in=asset_ssl_changed,nope', 'scope__in', ['"nope" is not a valid choice.']],
      ['scope__nin=nope', 'scope__nin', ['"nope" is not a valid choice.']],
      ['frequency__in=yearly', 'frequency__in', ['"yearly" is not a valid choice.']],
      ['frequency__nin=Daily', 'frequency__nin', ['"Daily" is not a valid choice.']],
      ['members__in=not-a-uuid', 'members__in', ['Must be a valid UUID.']],
      ['members__nin=1234', 'members__nin', ['Must be a valid UUID.']],
      ['enabled=maybe', 'enabled', ['Must be a valid boolean.']],
      ['enabled=yes', 'enabled', ['Must be a valid boolean.']],
      ['enabled=2', 'enabled', ['Must be a valid boolean.']],
      ['added_date__lte=yesterday', 'added_date__lte', [DATETIME_MESSAGE]],
      ['added_date__gte=2026-02-30', 'added_date__gte', [DATETIME_MESSAGE]],
      ['added_date__gte=2026-11-20T25:00:00Z', 'added_date__gte', [DATETIME_MESSAGE]],
      ['last_update_date__lte=20261120', 'last_update_date__lte', [DATETIME_MESSAGE]],
      ['last_update_date__gte=1700000000', 'last_update_date__gte', [DATETIME_MESSAGE]],
      ['page=0', 'page', ['Ensure this value is greater than or equal to 1.']],
      ['page=-1', 'page', ['Ensure this value is greater than or equal to 1.']],
      ['page=801', 'page', ['Ensure this value is less than or equal to 800.']],
      ['page=abc', 'page', ['A valid integer is required.']],
      ['page=1.5', 'page', ['A valid integer is required.']],
      ['page_size=24', 'page_size', ['Ensure this value is greater than or equal to 25.']],
      ['page_size=101', 'page_size', ['Ensure this value is less than or equal to 100.']],
      ['page_size=ten', 'page_size', ['A valid integer is required.']],
    ])('%s -> 400 on that parameter', async (query, param, details) => {
      await expectRejected(query, param, details);
    });

    it('reports every bad parameter in one answer', async () => {
      const response = await t.api(org.key, 'GET', `${RULES}?page=0&page_size=101&enabled=maybe&ordering=colour&scope__in=nope&added_date__gte=x`);
      expect(response.statusCode).toBe(400);
      const params = response.json().parameters.map((p: { param: string }) => p.param).sort();
      expect(params).toEqual(['added_date__gte', 'enabled', 'ordering', 'page', 'page_size', 'scope__in'].sort());
    });

    it('accepts the bounds page=1, page=800, page_size=25 and page_size=100', async () => {
      expect((await list('page=1&page_size=25')).results).toHaveLength(6);
      expect(await list('page=800&page_size=100')).toMatchObject({ page: 800, page_size: 100, result_count: 6, results: [] });
    });
  });

  describe('pagination', () => {
    let bulk: TestOrg;
    let createdIds: string[];
    const TOTAL = 60;

    beforeAll(async () => {
      bulk = await t.createOrg({ memberCount: 2 });
      createdIds = [];
      // Parallel batches; names repeat so that orderings by name have many ties.
      for (let start = 0; start < TOTAL; start += 20) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(20, TOTAL - start) }, (_, i) =>
            t.api(bulk.key, 'POST', RULES, {
              name: `bulk ${(start + i) % 7}`,
              scope: (start + i) % 2 === 0 ? 'new_open_port_detected' : 'asset_ssl_changed',
              frequency: (start + i) % 3 === 0 ? 'daily' : 'instant',
              members: [bulk.members[(start + i) % 2]!.team_member_uuid],
            }),
          ),
        );
        for (const response of batch) {
          expect(response.statusCode, response.body).toBe(201);
          createdIds.push(response.json().id);
        }
      }
    });

    const pageOf = async (query: string): Promise<Page> => {
      const response = await t.api(bulk.key, 'GET', `${RULES}?${query}`);
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    };

    it.each(['', '&ordering=name', '&ordering=-name', '&ordering=scope,-frequency', '&ordering=enabled', '&ordering=added_date'])(
      'walks 60 rules in pages of 25 without gaps or repeats (%s)',
      async (ordering) => {
        const pages = await Promise.all([1, 2, 3, 4].map((page) => pageOf(`page=${page}&page_size=25${ordering}`)));
        expect(pages.map((p) => p.results.length)).toEqual([25, 25, 10, 0]);
        for (const [i, p] of pages.entries()) {
          expect(p).toMatchObject({ page: i + 1, page_size: 25, result_count: TOTAL });
        }
        const walked = pages.flatMap((p) => p.results.map((r) => r.id));
        expect(new Set(walked).size).toBe(TOTAL);
        expect(sorted(walked)).toEqual(sorted(createdIds));
        // The pages are slices of the one-page answer in the same order.
        const whole = await pageOf(`page_size=100${ordering}`);
        expect(whole.results.map((r) => r.id)).toEqual(walked);
      },
    );

    it('pages through a filtered list with the filtered result_count on every page', async () => {
      const daily = await pageOf('frequency__in=daily&page_size=25');
      expect(daily.result_count).toBe(20);
      expect(daily.results).toHaveLength(20);
      const filtered = await Promise.all([1, 2].map((page) => pageOf(`scope__in=asset_ssl_changed&page=${page}&page_size=25`)));
      expect(filtered.map((p) => [p.result_count, p.results.length])).toEqual([[30, 25], [30, 5]]);
      expect(new Set(filtered.flatMap((p) => p.results.map((r) => r.id))).size).toBe(30);
      for (const r of filtered.flatMap((p) => p.results)) expect(r.scope).toBe('asset_ssl_changed');
    });

    it('answers a page past the end with empty results and the true result_count', async () => {
      expect(await pageOf('page=4&page_size=25')).toEqual({ page: 4, page_size: 25, result_count: TOTAL, results: [] });
      expect(await pageOf('page=800&page_size=25')).toEqual({ page: 800, page_size: 25, result_count: TOTAL, results: [] });
      expect(await pageOf('page=2&page_size=100')).toEqual({ page: 2, page_size: 100, result_count: TOTAL, results: [] });
    });

    it('returns at most page_size items, and 100 by default', async () => {
      expect((await pageOf('page_size=30')).results).toHaveLength(30);
      expect((await pageOf('')).results).toHaveLength(TOTAL);
    });
  });
});
