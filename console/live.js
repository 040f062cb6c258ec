// Live response counts while a mailing sends (or may start to: paused, awaiting approval or a
// split test's winner): server-sent events from
// /ui/api/{account}/mailings/{mailing}/live, falling back to a fetch every 2 s when the
// stream fails. Answers {response, status, live}.
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

/** Statuses of a mailing that may still send (src/server/console/live.ts's LIVE_STATUSES): the page listens. */
const MAY_SEND = ['p', 's', 'i', 'a', 'u', 'w'];

export function useLiveResponse(account, mailingId, initialStatus, initialResponse) {
  const [state, setState] = useState({ response: initialResponse, status: initialStatus, live: false });
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new stream per mailing, not per count
  useEffect(() => {
    setState({ response: initialResponse, status: initialStatus, live: false });
    if (!MAY_SEND.includes(initialStatus)) return undefined;
    let stopped = false;
    let timer;
    const source = new EventSource(`/ui/api/${account}/mailings/${mailingId}/live`);
    const apply = (event, live) => {
      const data = JSON.parse(event.data);
      setState({ response: data.response, status: data.mailing_status, live });
    };
    source.addEventListener('counts', (event) => apply(event, true));
    source.addEventListener('done', (event) => {
      apply(event, false);
      source.close();
    });
    const poll = async () => {
      if (stopped) return;
      try {
        const [mailing, response] = await Promise.all([api(`/${account}/mailings/${mailingId}`), api(`/${account}/response/${mailingId}`)]);
        if (stopped) return;
        const live = MAY_SEND.includes(mailing.mailing_status);
        setState({ response, status: mailing.mailing_status, live });
        if (live) timer = setTimeout(poll, 2000);
      } catch {
        timer = setTimeout(poll, 2000);
      }
    };
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) return;
      source.close();
      poll();
    };
    return () => {
      stopped = true;
      clearTimeout(timer);
      source.close();
    };
  }, [account, mailingId, initialStatus]);
  return state;
}
