// The origin of benches/node/fetch.mjs: a node:http server on 127.0.0.1
// answering GET /<bytes> with that many bytes at once (keep-alive); sends
// its port to the parent process.
import { createServer } from "node:http";

const bodies = new Map();
const server = createServer((request, response) => {
  const size = Number(request.url.slice(1)) || 0;
  if (!bodies.has(size)) bodies.set(size, Buffer.alloc(size, 120));
  response.writeHead(200, { "content-type": "application/octet-stream", "content-length": size });
  response.end(bodies.get(size));
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.send(server.address().port));
process.on("disconnect", () => server.close(() => process.exit(0)));
