/**
 * How well a message's HTML is supported by e-mail clients (GET /mailings/{id}/html_check,
 * the console's "HTML check", as Mailpit's): the caniemail package's data and checker
 * (caniemail.com's tables, shipped in the package: nothing is fetched). Loaded on
 * first use: its data is 640 KB that no other command needs.
 */
import { badRequest } from '../../errors.js';

export interface ClientResult {
  client: string;
  name: string;
  /** ok: nothing the message uses fails there; partial: only partly supported features; fail: at least one unsupported. */
  status: 'ok' | 'partial' | 'fail';
  unsupported: number;
  partial: number;
}

export interface FeatureResult {
  feature: string | null;
  title: string;
  url: string | null;
  category: string | null;
  /** n: some client does not support it at all; a: partly supported somewhere, unsupported nowhere. */
  support: 'n' | 'a';
  unsupported_in: { client: string; name: string; notes: string[] }[];
  partial_in: { client: string; name: string; notes: string[] }[];
}

export interface HtmlCheck {
  /** The share of the clients checked that show the message fully (a partly supporting one counts half), 0–100. */
  score: number;
  clients_checked: number;
  /** When caniemail's data was last updated (its own stamp). */
  data_date: string;
  clients: ClientResult[];
  features: FeatureResult[];
}

/** The clients caniemail checks (its clientNames, which it does not export). */
export const CLIENTS = [
  'apple-mail.macos',
  'apple-mail.ios',
  'gmail.desktop-webmail',
  'gmail.ios',
  'gmail.android',
  'gmail.mobile-webmail',
  'orange.desktop-webmail',
  'orange.ios',
  'orange.android',
  'outlook.windows',
  'outlook.windows-mail',
  'outlook.macos',
  'outlook.ios',
  'outlook.android',
  'yahoo.desktop-webmail',
  'yahoo.ios',
  'yahoo.android',
  'aol.desktop-webmail',
  'aol.ios',
  'aol.android',
  'samsung-email.android',
  'sfr.desktop-webmail',
  'sfr.ios',
  'sfr.android',
  'thunderbird.macos',
  'protonmail.desktop-webmail',
  'protonmail.ios',
  'protonmail.android',
  'hey.desktop-webmail',
  'mail-ru.desktop-webmail',
  'fastmail.desktop-webmail',
  'laposte.desktop-webmail',
] as const;

/** The clients a list of names or globs names, in CLIENTS order: `*`, `gmail.*`, `*.ios`, `outlook.windows`. */
export function matchClients(globs: string[]): string[] {
  const patterns = globs.map((g) => {
    const [family = '', platform = '*'] = g.trim().toLowerCase().split('.', 2);
    return g.trim() === '*' ? ['*', '*'] : [family, platform];
  });
  return CLIENTS.filter((c) => {
    const [family, platform] = c.split('.');
    return patterns.some(([f, p]) => (f === '*' || f === family) && (p === '*' || p === platform));
  });
}

type Caniemail = typeof import('caniemail');
let loaded: Promise<Caniemail> | undefined;
const caniemail = () => (loaded ??= import('caniemail'));

interface RawData {
  last_update_date: string;
  nicenames: { family: Record<string, string>; platform: Record<string, string> };
  data: { slug: string; title: string; url: string; category: string }[];
}

export async function checkHtml(html: string, clientGlobs: string[] = ['*']): Promise<HtmlCheck> {
  const lib = await caniemail();
  const raw = lib.rawData as unknown as RawData;
  const nameOf = (client: string) => {
    const [family, platform] = client.split('.');
    return `${raw.nicenames.family[family] ?? family} ${raw.nicenames.platform[platform] ?? platform}`;
  };
  const clients = matchClients(clientGlobs);
  if (clients.length === 0)
    throw badRequest(`clients: ${clientGlobs.join(', ')} names no e-mail client caniemail knows (e.g. gmail.*, *.ios, outlook.windows)`, {
      field: 'clients',
    });
  const features = new Map<string, FeatureResult>();
  const byTitle = new Map(raw.data.map((f) => [f.title, f]));
  const perClient = new Map<string, ClientResult>(
    clients.map((c) => [c, { client: c, name: nameOf(c), status: 'ok', unsupported: 0, partial: 0 }]),
  );
  if (html.trim() !== '') {
    const result = lib.caniemail({ clients: clients as Parameters<Caniemail['caniemail']>[0]['clients'], html });
    for (const [kind, map] of [
      ['error', result.issues.errors],
      ['warning', result.issues.warnings],
    ] as const)
      for (const [client, issues] of map) {
        // One feature can be reported at several places of the message: once a client.
        for (const title of new Set(issues.map((i) => i.title))) {
          const issue = issues.find((i) => i.title === title)!;
          const known = byTitle.get(title);
          let f = features.get(title);
          if (!f)
            features.set(
              title,
              (f = {
                feature: known?.slug ?? null,
                title,
                url: known?.url ?? null,
                category: known?.category ?? null,
                support: 'a',
                unsupported_in: [],
                partial_in: [],
              }),
            );
          const entry = { client, name: nameOf(client), notes: issue.notes };
          const c = perClient.get(client)!;
          if (kind === 'error') {
            f.support = 'n';
            f.unsupported_in.push(entry);
            c.unsupported++;
            c.status = 'fail';
          } else {
            f.partial_in.push(entry);
            c.partial++;
            if (c.status === 'ok') c.status = 'partial';
          }
        }
      }
  }
  const list = [...perClient.values()];
  const shown = list.reduce((n, c) => n + (c.status === 'ok' ? 1 : c.status === 'partial' ? 0.5 : 0), 0);
  return {
    score: Math.round((100 * shown) / list.length),
    clients_checked: list.length,
    data_date: raw.last_update_date,
    clients: list,
    features: [...features.values()].sort(
      (a, b) =>
        b.unsupported_in.length - a.unsupported_in.length || b.partial_in.length - a.partial_in.length || a.title.localeCompare(b.title),
    ),
  };
}
