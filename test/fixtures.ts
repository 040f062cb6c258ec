/** The repository's fixtures (fixtures/), for the API and the end-to-end tests alike. */
import { fileURLToPath } from 'node:url';

export const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

/** The ids `fixtures/small.yaml` is given on a new HQ account (`amsg init --hq`), by kind and name. */
export const SMALL_YAML_IDS = {
  fields: { city: 3, birthday: 4, score: 5, plan: 6, support: 7 },
  field_relationships: { 'Support by plan': 1 },
  groups: { Gold: 1, Newsletter: 2 },
  subscriptions: { 'Product news': 1 },
  searches: { Oslo: 1, 'Gold in Oslo': 2, 'High scorers': 3 },
  event_types: { purchase: 1 },
  touchpoint_types: { web_visit: 1 },
  members: { 'ada@example.com': 1, 'kari@example.no': 2, 'ola@example.no': 3, 'gone@example.org': 4 },
  mailings: { Welcome: 1, 'Summer sale': 2 },
  sms_campaigns: { 'Flash sale': 1 },
  triggers: { 'Birthday greeting': 1 },
  workflows: { 'Web buyers': 1 },
  member_events: { 'ada@example.com purchase 2026-04-01T10:00:00': 1 },
  touchpoints: { 'kari@example.no web_visit 2026-04-02T08:30:00': 1 },
  subaccounts: { 'Oslo branch': 2 },
  webhooks: { 'group_delete https://hooks.example.com/amsg': 1 },
};
