// memoryd's OpenClaw plugin with Node's test runner, against the real `openclaw` CLI and a real memoryd daemon.
// Run by tests/test_openclaw.py, which starts the daemon (MEMORYD_SOCKET) over a workspace whose notes it names
// (EXPECT_PATH, EXPECT_TEXT) and gives OpenClaw a home of its own (HOME); `npm test` alone needs the same.
import assert from "node:assert/strict"
import { spawn, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { test } from "node:test"
import { fileURLToPath } from "node:url"
import { encode } from "@msgpack/msgpack"

const here = dirname(fileURLToPath(import.meta.url))
const plugin = join(here, "..")
const { MEMORYD_SOCKET, EXPECT_PATH, EXPECT_TEXT } = process.env

function openclaw(args, env = {}) {
  const done = spawnSync("openclaw", args, { encoding: "utf8", env: { ...process.env, ...env }, timeout: 120_000 })
  return { code: done.status, out: done.stdout, err: done.stderr }
}

test("installing links the plugin, enables it and gives it the memory slot", () => {
  const installed = openclaw(["plugins", "install", "--force", "--accept-capabilities", "--link", plugin])
  assert.equal(installed.code, 0, installed.err)
  assert.equal(openclaw(["plugins", "enable", "memoryd"]).code, 0)
  assert.equal(openclaw(["config", "set", "plugins.slots.memory", "memoryd"]).code, 0)
  const config = JSON.parse(readFileSync(join(process.env.HOME, ".openclaw", "openclaw.json"), "utf8"))
  assert.equal(config.plugins.slots.memory, "memoryd")
  assert.equal(config.plugins.entries.memoryd.enabled, true)
})

test("openclaw memory search is answered by memoryd", () => {
  const found = openclaw(["memory", "search", "--json", "which", "database", "does", "Alice", "prefer"])
  assert.equal(found.code, 0, found.err)
  const { results } = JSON.parse(found.out)
  assert.ok(results.length > 0, found.out)
  assert.equal(results[0].path, EXPECT_PATH)
  assert.match(results[0].snippet, new RegExp(EXPECT_TEXT))
  assert.match(results[0].citation, /#L\d+-L\d+$/)
  assert.ok(results[0].startLine >= 1 && results[0].endLine >= results[0].startLine)
})

test("openclaw memory status and index speak for memoryd", () => {
  const status = openclaw(["memory", "status"])
  assert.equal(status.code, 0, status.err)
  assert.match(status.out, /memoryd: \d+ files, \d+ chunks/)
  const index = openclaw(["memory", "index"])
  assert.equal(index.code, 0, index.err)
  assert.match(index.out, /memoryd: indexed/)
})

test("with memoryd down, openclaw memory says so in one line and how to start it", () => {
  const down = openclaw(["memory", "search", "anything"], { MEMORYD_SOCKET: join(tmpdir(), "no-memoryd-here.sock") })
  assert.equal(down.code, 3)
  assert.match(down.err, /memoryd is not running .*Start it with: memoryd run/)
})

test("a daemon that answers garbage is an error, not a hang", async () => {
  const path = join(tmpdir(), `memoryd-garbage-${process.pid}.sock`)
  const server = createServer((socket) => socket.end(encode([1, 999, null, "not ours"]))).listen(path)
  await new Promise((resolve) => server.once("listening", resolve))
  try {
    // spawn, not spawnSync: this process's event loop must stay free to serve the garbage
    const bad = await new Promise((resolve) => {
      const child = spawn("openclaw", ["memory", "search", "anything"], { env: { ...process.env, MEMORYD_SOCKET: path } })
      let stderr = ""
      child.stderr.on("data", (chunk) => (stderr += chunk))
      child.on("close", (status) => resolve({ status, stderr }))
    })
    assert.notEqual(bad.status, 0)
    assert.match(bad.stderr, /memoryd: memoryd closed the connection before it answered search/)
  } finally {
    server.close()
  }
})

test("the committed bundle is what the source builds", () => {
  const built = spawnSync(
    "esbuild",
    ["src/index.ts", "--bundle", "--platform=node", "--format=esm", "--target=node24", "--external:openclaw"],
    { cwd: plugin, encoding: "utf8" },
  )
  assert.equal(built.status, 0, built.stderr)
  assert.equal(built.stdout, readFileSync(join(plugin, "dist", "index.js"), "utf8"), "run npm run build and commit dist")
})

test("removing hands the memory slot back", () => {
  const removed = openclaw(["plugins", "uninstall", "--force", "memoryd"])
  assert.equal(removed.code, 0, removed.err)
  const status = openclaw(["memory", "status"])
  assert.doesNotMatch(status.out, /memoryd:/)
})
