// Node.js 20 to 23 abort in V8 (issue 20): "Fatal error in , line 0 /
// unreachable code", Deoptimizer::DoComputeBuiltinContinuation. TurboFan
// inlines a JS-to-wasm call into its caller when the wasm function returns
// at most one value; when the caller is then deoptimized while the call runs
// (here: the call changes the representation of a field the caller reads),
// V8 11.3-12.9's deoptimizer cannot rebuild an `externref` result and
// aborts. `limiter.run` and `limiter.fetch` call the user's `fn` / the global
// `fetch` inside their wasm call; they return a `Result` from wasm
// (crates/edgeshed-js/src/limiter.rs, `NotInlined`), so TurboFan never inlines them.
//
// Each case runs in a child process (tests/js/fixtures/deopt-loop.mjs): an
// abort takes the whole process.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import "./support/link-package.mjs";

const LOOP = fileURLToPath(new URL("./fixtures/deopt-loop.mjs", import.meta.url));
const [major] = process.versions.node.split(".").map(Number);
// The versions whose V8 aborts (checked on 18.20.8, 20.0.0, 20.20.2, 21.7.3,
// 22.0.0, 22.23.5, 23.11.1, 24.22.3; README, "Node.js versions").
const AFFECTED = major >= 20 && major <= 23;

function loop(target) {
  const child = spawnSync(process.execPath, [LOOP, target], { encoding: "utf8", timeout: 60_000 });
  const output = `${child.stdout}${child.stderr}`.trim().slice(0, 800);
  return { status: child.status, signal: child.signal, output };
}

for (const target of ["run", "fetch"]) {
  test(`limiter.${target} in a hot loop that its call deoptimizes: the process survives`, () => {
    const { status, signal, output } = loop(target);
    assert.equal(signal, null, `killed by ${signal}: ${output}`);
    assert.equal(status, 0, output);
    assert.match(output, new RegExp(`^survived: ${target}, point.x 0.5$`, "m"));
  });
}

test("control: the same loop over a wasm export returning one externref aborts on Node.js 20-23, one with two results does not", { skip: !AFFECTED && `Node.js ${process.version} is not affected` }, () => {
  const single = loop("externref");
  assert.equal(single.signal, "SIGTRAP", `expected V8's abort: ${JSON.stringify(single)}`);
  assert.match(single.output, /unreachable code/);
  const multi = loop("multivalue");
  assert.equal(multi.status, 0, multi.output);
  assert.match(multi.output, /^survived: multivalue/m);
});
