/** Small helpers shared by the route-table tests (each call goes through the real routes). */
import { expect } from 'vitest';
import type { TestService } from '../helpers.js';

/** `@D:` form of an ISO instant, as the service answers it. */
export const atD = (iso: string) => `@D:${iso.slice(0, 19)}`;

export async function ok(s: TestService, method: string, path: string, opts?: Parameters<TestService['call']>[2]) {
  const res = await s.call(method, path, opts);
  if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Adds a member through POST /members/add and answers its id. */
export async function addMember(s: TestService, email: string, extra: Record<string, unknown> = {}): Promise<number> {
  const body = await ok(s, 'POST', '/1/members/add', { body: { email, ...extra } });
  return body.member_id;
}

/** Creates groups through POST /groups and answers their ids in order. */
export async function createGroups(s: TestService, ...names: string[]): Promise<number[]> {
  const body = await ok(s, 'POST', '/1/groups', { body: { groups: names.map((group_name) => ({ group_name })) } });
  return body.map((g: { member_group_id: number }) => g.member_group_id);
}

export async function createField(s: TestService, def: Record<string, unknown>): Promise<number> {
  const body = await ok(s, 'POST', '/1/fields', { body: { display_name: String(def.shortcut_name), ...def } });
  expect(typeof body).toBe('number');
  return body;
}

export async function setStatus(s: TestService, memberIds: number[], status_to: string) {
  expect(await ok(s, 'PUT', '/1/members/status', { body: { member_ids: memberIds, status_to } })).toBe(true);
}

export async function getMember(s: TestService, id: number, deleted = false) {
  return ok(s, 'GET', `/1/members/${id}`, deleted ? { query: { deleted: 'true' } } : undefined);
}

/** member_id → member_status_id straight from the table. */
export function statuses(s: TestService): Record<number, string> {
  const rows = s.db.prepare('SELECT member_id, member_status_id FROM members ORDER BY member_id').all() as {
    member_id: number;
    member_status_id: string;
  }[];
  return Object.fromEntries(rows.map((r) => [r.member_id, r.member_status_id]));
}

export function groupMemberIds(s: TestService, groupId: number): number[] {
  return (
    s.db.prepare('SELECT member_id FROM group_members WHERE member_group_id = ? ORDER BY member_id').all(groupId) as { member_id: number }[]
  ).map((r) => r.member_id);
}

export function countRows(s: TestService, table: string, where = '1', ...params: unknown[]): number {
  return (s.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).get(...params) as { n: number }).n;
}

/** A whole-database fingerprint, to prove that a failed request changed nothing. */
export function snapshot(s: TestService): string {
  const tables = ['accounts', 'users', 'api_keys', 'fields', 'members', 'member_optouts', 'member_groups', 'group_members'];
  return JSON.stringify(tables.map((t) => s.db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all()));
}

/** Asserts a validation failure: the status, and an error body that names the field first. */
export function expectFieldError(res: { status: number; body: any }, field: string, status = 400) {
  expect(res.status).toBe(status);
  expect(typeof res.body.error).toBe('string');
  expect(res.body.field).toBe(field);
  expect(res.body.error.startsWith(`${field}: `)).toBe(true);
}
