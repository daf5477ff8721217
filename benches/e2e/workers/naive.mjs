// Baseline 2 for benches/e2e: the same fan-out as the edgeshed worker's
// /aggregate route with no limit at all: every request calls every origin at
// once. Binding BENCH: { origins: { a: "http://127.0.0.1:port", ... } }.
export default {
  async fetch(request, env) {
    const { origins } = env.BENCH;
    if (new URL(request.url).pathname !== "/aggregate") {
      return Response.json({ error: "not_found" }, { status: 404 });
    }
    try {
      const entries = await Promise.all(
        Object.entries(origins).map(async ([name, url]) => {
          const response = await fetch(`${url}/${name}`);
          if (!response.ok) throw new Error(`${name} answered ${response.status}`);
          return [name, await response.json()];
        }),
      );
      return Response.json({ results: Object.fromEntries(entries), degraded: [] });
    } catch {
      return Response.json({ error: "bad_gateway" }, { status: 502 });
    }
  },
};
