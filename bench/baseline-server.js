// The HTTP baseline: a bare node:http server answering one constant JSON body to
// every request, on 127.0.0.1 and an ephemeral port. Prints its base URL as the
// first stdout line (like `amsg serve`). The body comes from AMSG_BENCH_BODY, so
// bench/run.js can hand it the exact bytes `amsg serve` answers.
import http from 'node:http';

const body =
  process.env.AMSG_BENCH_BODY ??
  JSON.stringify({
    member_id: 1,
    account_id: 1,
    email: 'bench@example.com',
    status: 'active',
    member_status_id: 'a',
    confirmed_opt_in: null,
    fields: {},
    sms: null,
    last_modified_at: '@D:2026-01-01T00:00:00',
    member_since: '@D:2026-01-01T00:00:00',
    deleted_at: null,
    plaintext_preferred: false,
    email_error: null,
    bounce_count: 0,
  });
const length = Buffer.byteLength(body);

const server = http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': length });
  res.end(body);
});
// The same keep-alive window as `amsg serve`.
server.keepAliveTimeout = 5_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(`http://127.0.0.1:${port}\n`);
});

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
