// Renders the tables and the goals of a saved run again (the plot:
// lib/plot.mjs):  node benches/e2e/lib/render.mjs results.json [out.md]
import { readFileSync, writeFileSync } from "node:fs";
import { goalsMarkdown, tableMarkdown } from "./report.mjs";

const [json, md] = process.argv.slice(2);
if (!json) {
  console.error("usage: node benches/e2e/lib/render.mjs results.json [out.md]");
  process.exit(2);
}
const { meta, rows } = JSON.parse(readFileSync(json, "utf8"));
const markdown = `${tableMarkdown(rows, meta)}\n${goalsMarkdown(rows, meta)}`;
if (md) writeFileSync(md, markdown);
else console.log(markdown);
