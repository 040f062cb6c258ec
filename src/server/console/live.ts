/**
 * A mailing's counts as server-sent events while it sends
 * (`GET /ui/api/{account_id}/mailings/{mailing_id}/live`, docs/console-contract.md §6).
 * Each look is the API's own operations asked as the session's user (the response
 * counts and the mailing), so the stream shows exactly what a page reload would.
 */
import type http from 'node:http';
import type { ApiRequest, ApiResponse, Router } from '../../api/router.js';
import { jsonText } from '../../api/json-text.js';
import type { Actor } from '../../service/context.js';
import { NOT_SIGNED_IN } from './pages.js';

/** How often the counts are looked at, and how often an idle stream says it is alive. */
export const LIVE_INTERVAL_MS = 500;
export const PING_INTERVAL_MS = 15_000;
/**
 * The statuses of a mailing that may still send without anything else on its page changing:
 * pending, injecting, sending, and paused (resumed), unapproved (approved) or waiting for a
 * split test's winner (picked) from elsewhere; the page's counts then move as they go.
 */
export const LIVE_STATUSES = ['p', 'i', 's', 'a', 'u', 'w'];
const ACTIVE = new Set(LIVE_STATUSES);

export interface LiveStreams {
  /** Ends every open stream (the server is closing: an open stream would hold it). */
  closeAll(): void;
  /** `actor` is asked at each look: a session that ends (sign-out, a revoked key) ends its stream. */
  open(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    actor: () => Actor | undefined,
    accountId: string,
    mailingId: string,
    json: JsonAnswer,
  ): void;
}

/** Writes a JSON answer with the console's headers. */
export type JsonAnswer = (res: http.ServerResponse, r: ApiResponse) => void;

export function liveStreams(router: Router, intervals = { look: LIVE_INTERVAL_MS, ping: PING_INTERVAL_MS }): LiveStreams {
  const open = new Set<() => void>();

  const ask = (actor: Actor, path: string) => {
    const request: ApiRequest = { method: 'GET', path, query: {}, actor };
    // GETs of the table answer synchronously (better-sqlite3).
    return router.handle(request) as ApiResponse;
  };

  /** The event's data, or the API's error answer. */
  const look = (
    actorNow: () => Actor | undefined,
    accountId: string,
    mailingId: string,
  ): { data: string; active: boolean } | ApiResponse => {
    const actor = actorNow();
    if (!actor) return { status: 401, body: { error: NOT_SIGNED_IN } };
    const mailing = ask(actor, `/${accountId}/mailings/${mailingId}`);
    if (mailing.status !== 200) return mailing;
    const response = ask(actor, `/${accountId}/response/${mailingId}`);
    if (response.status !== 200) return response;
    const status = (mailing.body as { mailing_status: string }).mailing_status;
    return { data: jsonText({ mailing_status: status, response: response.body }), active: ACTIVE.has(status) };
  };

  return {
    closeAll() {
      for (const close of [...open]) close();
    },
    open(req, res, actor, accountId, mailingId, json) {
      const first = look(actor, accountId, mailingId);
      if (!('data' in first)) return json(res, first);
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        // Tells a proxy in front (nginx) not to hold the events back.
        'x-accel-buffering': 'no',
      });
      let last = first.data;
      const send = (event: string, data: string) => res.write(`event: ${event}\ndata: ${data}\n\n`);
      const close = () => {
        clearInterval(poll);
        clearInterval(ping);
        open.delete(close);
        res.end();
      };
      send('counts', first.data);
      if (!first.active) {
        send('done', first.data);
        return void res.end();
      }
      const poll = setInterval(() => {
        let next: ReturnType<typeof look>;
        try {
          next = look(actor, accountId, mailingId);
        } catch {
          return close();
        }
        // The mailing went away (purged) or the user lost access: say so and stop.
        if (!('data' in next)) {
          send('error', jsonText({ status: next.status, ...(next.body as object) }));
          return close();
        }
        if (next.data !== last) send('counts', (last = next.data));
        if (!next.active) {
          send('done', next.data);
          close();
        }
      }, intervals.look);
      const ping = setInterval(() => res.write(': ping\n\n'), intervals.ping);
      open.add(close);
      req.once('close', close);
    },
  };
}
