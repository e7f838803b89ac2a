/**
 * Shared by the abuse tests: the app's route table as data, and the checks of the error bodies of
 * decisions §1, so every abuse test judges an answer the same way.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const DOCS = 'https://docs.example.test/notification-rules';

export interface RouteEntry {
  method: string;
  /** The route pattern as registered, e.g. `/v1/platform/notification-rules/:rule_id`. */
  url: string;
  /** Path parameters, in order. */
  params: string[];
}

/**
 * Every route of the app, read from Fastify's own route table (printRoutes), so a route added later
 * shows up here without anyone listing it. HEAD twins of GET routes are left out.
 */
export function routeTable(app: FastifyInstance): RouteEntry[] {
  const lines = app.printRoutes({ commonPrefix: false }).split('\n');
  const stack: string[] = [];
  const routes: RouteEntry[] = [];
  for (const line of lines) {
    const match = /^([│ ]*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    if (!match[3]) continue;
    for (const method of match[3].split(', ')) {
      if (method === 'HEAD') continue;
      const url = wildcardPattern(app, method, stack);
      routes.push({ method, url, params: [...url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!) });
    }
  }
  return routes;
}

/**
 * find-my-way prints a wildcard child as a bare `*`, dropping the static segments between it and the
 * printed parent (`/admin/queues/static/*` shows as `*` under `/admin/queues`): the usual ones are
 * tried against the router, and an unresolved one keeps `<parent>*`.
 */
function wildcardPattern(app: FastifyInstance, method: string, stack: string[]): string {
  const url = stack.join('');
  if (stack[stack.length - 1] !== '*') return url;
  const parent = stack.slice(0, -1).join('');
  const candidates = [`${parent}/static/*`, `${parent}/*`, `${parent}*`];
  return candidates.find((candidate) => app.hasRoute({ method: method as 'GET', url: candidate })) ?? url;
}

/** The URL of a route with its parameters filled in. */
export function fill(url: string, values: Record<string, string>): string {
  return url.replace(/:([A-Za-z_]+)/g, (_all, name: string) => encodeURIComponent(values[name] ?? `unknown-${name}`)).replace(/\/?\*$/, '/anything');
}

function expectRequestId(response: LightMyRequestResponse, context: string): string {
  const id = response.headers['service-request-id'];
  expect(id, `${context}: service-request-id`).toMatch(UUID);
  return id as string;
}

/** A gateway error of decisions §1: `{message, request_id}` with the header's id. */
export function expectGatewayError(response: LightMyRequestResponse, status: number, message: string | RegExp, context = ''): void {
  const label = `${context} ${response.statusCode} ${response.body.slice(0, 300)}`;
  expect(response.statusCode, label).toBe(status);
  const id = expectRequestId(response, label);
  expect(String(response.headers['content-type']), label).toBe('application/json; charset=utf-8');
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(Object.keys(body).sort(), label).toEqual(['message', 'request_id']);
  expect(body.request_id, label).toBe(id);
  if (typeof message === 'string') expect(body.message, label).toBe(message);
  else expect(body.message, label).toMatch(message);
}

/** An application error of decisions §1: `{code, details, parameters, solution}`, code 10000 + status. */
export function expectApplicationError(response: LightMyRequestResponse, status: number, context = ''): { code: number; details: string | null; parameters: Array<{ param: string; details: string[] }>; solution: string } {
  const label = `${context} ${response.statusCode} ${response.body.slice(0, 300)}`;
  expect(response.statusCode, label).toBe(status);
  expectRequestId(response, label);
  expect(String(response.headers['content-type']), label).toBe('application/json; charset=utf-8');
  const body = JSON.parse(response.body);
  expect(Object.keys(body).sort(), label).toEqual(['code', 'details', 'parameters', 'solution']);
  expect(body.code, label).toBe(10000 + status);
  expect(body.details === null || typeof body.details === 'string', label).toBe(true);
  expect(Array.isArray(body.parameters), label).toBe(true);
  // The docs link of the app under test (startTestApp's DOCS, or the pipeline harness's own).
  expect(body.solution, label).toMatch(/^https?:\/\/\S+$/);
  for (const leak of ['    at ', 'FST_', 'syntax error at', 'violates', 'relation "']) expect(response.body, `${label} leaks ${leak}`).not.toContain(leak);
  return body;
}

/** The `param`s a 400 names. */
export function paramsOf(response: LightMyRequestResponse): string[] {
  return (response.json().parameters as Array<{ param: string }>).map((p) => p.param);
}
