/**
 * Sub-accounts of an HQ account, matched on the account name. The service has no
 * operation that changes a sub-account once created, so one that exists by name is
 * left as it is. On an account that is not an HQ the fixture is refused before
 * anything is written, naming each sub-account's path.
 */
import type { Api } from '../../client/api.js';
import { ApiError } from '../../errors.js';
import { pages } from '../paging.js';
import { norm, type Kind, type SeedRun } from './kind.js';
import * as v from './shape.js';

const text = v.str({ max: 255 });
const subaccountRecord = v.nameOr(
  'account_name',
  v.obj(
    {
      account_name: v.str({ max: 255 }),
      account_status: v.oneOf(['active', 'trial'] as const),
      account_timezone: text,
      account_rsvp_email: v.email,
      account_rsvp_name: text,
      account_rsvp_address_1: text,
      account_rsvp_address_2: text,
      account_rsvp_city: text,
      account_rsvp_province: text,
      account_rsvp_state: text,
      account_rsvp_zip_code: text,
      account_rsvp_country: text,
      country_abbrev: v.oneOf(['true', 'false'] as const),
      send_response_summary: v.bool,
      show_code_your_own: v.bool,
      show_blank_template: v.bool,
    },
    ['account_name'],
  ),
);
type SubaccountRecord = NonNullable<ReturnType<typeof subaccountRecord>>;
interface SubaccountRow {
  account_id: number;
  account_name: string;
  account_status: string;
}

/** Accounts the service said are not HQ accounts when their sub-accounts were listed. */
const notHq = new WeakSet<Api>();

async function listSubaccounts(api: Api): Promise<SubaccountRow[]> {
  const all: SubaccountRow[] = [];
  for await (const page of pages<SubaccountRow>(api, '/enterprise/subaccounts', {}, { key: 'subaccounts' })) all.push(...page);
  return all;
}

const isNotHqError = (err: unknown) => err instanceof ApiError && err.status === 400 && err.body.field === 'parent_account_id';

export const subaccounts: Kind<SubaccountRecord, SubaccountRow> = {
  name: 'subaccounts',
  record: subaccountRecord,
  key: (r) => r.account_name,
  async existing(api, names) {
    // An account without sub-accounts in the file need not be an HQ.
    if (!names.size) return new Map();
    try {
      return new Map((await listSubaccounts(api)).map((a) => [norm(a.account_name), a]));
    } catch (err) {
      if (!isNotHqError(err)) throw err;
      notHq.add(api);
      return new Map();
    }
  },
  check: (run, _r, path) =>
    notHq.has(run.api)
      ? [
          [
            path,
            `account ${run.api.accountId} is not an HQ account, and only an HQ account has sub-accounts (\`amsg init --hq\` makes a local one an HQ)`,
          ],
        ]
      : [],
  idOf: (a) => a.account_id,
  create: async (run, r) => (await run.api.post<{ account_id: number }>('/enterprise/subaccount', r)).account_id,
};

/** Retires the HQ's sub-accounts (their data is purged 30 days later); an account that is not an HQ has none. */
export async function resetSubaccounts(run: Pick<SeedRun, 'api'>): Promise<void> {
  let list: SubaccountRow[];
  try {
    list = await listSubaccounts(run.api);
  } catch (err) {
    if (isNotHqError(err)) return;
    throw err;
  }
  for (const a of list) await run.api.delete(`/enterprise/subaccount/${a.account_id}`);
}
