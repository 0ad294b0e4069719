// memoryd's OpenClaw plugin with Node's test runner, against the real `openclaw` CLI and a real memoryd daemon.
// Run by tests/test_openclaw.py, which starts the daemon (MEMORYD_SOCKET) over a workspace whose notes it names
// (EXPECT_PATH, EXPECT_TEXT; FORGET_CITATION and TOOL_CITATION, one line each holding FORGET_TEXT and TOOL_TEXT, for
// the tests that forget, update and undo; SUPERSEDED_QUERY finds lines a later write marked superseded) and gives
// OpenClaw a home of its own (HOME); `npm test` alone needs the same.
import assert from "node:assert/strict"
import { spawn, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { test } from "node:test"
import { fileURLToPath } from "node:url"
import { encode } from "@msgpack/msgpack"

const here = dirname(fileURLToPath(import.meta.url))
const plugin = join(here, "..")
const { EXPECT_PATH, EXPECT_TEXT, FORGET_CITATION, FORGET_TEXT, TOOL_CITATION, TOOL_TEXT, SUPERSEDED_QUERY } = process.env

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

test("openclaw memory search shows each result's date, and that a later note superseded it", () => {
  const day = EXPECT_PATH.match(/\d{4}-\d{2}-\d{2}/)[0] // a daily note's date is its name's
  const found = openclaw(["memory", "search", "which", "database", "does", "Alice", "prefer"])
  assert.equal(found.code, 0, found.err)
  assert.match(found.out, new RegExp(`${EXPECT_PATH}#L\\d+-L\\d+  \\(${day}\\)`))
  const json = JSON.parse(openclaw(["memory", "search", "--json", "which", "database", "does", "Alice", "prefer"]).out)
  assert.equal(json.results[0].date, day)
  const old = openclaw(["memory", "search", SUPERSEDED_QUERY])
  assert.equal(old.code, 0, old.err)
  assert.match(old.out, /\(\d{4}-\d{2}-\d{2}; superseded \d{4}-\d{2}-\d{2} by memory\/\S+#L\d+-L\d+\)/)
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

function fakeAnthropic(toolCall = null) {
  // a local server that speaks Anthropic's Messages API (streamed), so that a real agent turn runs here; with
  // `toolCall`, its first answer calls that tool and the next one (with the tool's result) is text
  const bodies = []
  const server = createHttpServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      if (req.url.includes("count_tokens")) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: 10 }))
        return
      }
      bodies.push(body)
      const calling = toolCall && !body.includes("tool_result")
      const start = { id: "msg_1", type: "message", role: "assistant", model: "claude", content: [], stop_reason: null,
        stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } }
      // OpenClaw defers plugin tools behind its Tool Search catalog: a model calls them through tool_call
      const block = calling
        ? { type: "tool_use", id: "toolu_memoryd_1", name: "tool_call", input: {} }
        : { type: "text", text: "" }
      const delta = calling
        ? { type: "input_json_delta", partial_json: JSON.stringify({ id: toolCall.name, args: toolCall.input }) }
        : { type: "text_delta", text: "Noted." }
      const events = [
        ["message_start", { type: "message_start", message: start }],
        ["content_block_start", { type: "content_block_start", index: 0, content_block: block }],
        ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
        ["content_block_stop", { type: "content_block_stop", index: 0 }],
        ["message_delta", { type: "message_delta", delta: { stop_reason: calling ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } }],
        ["message_stop", { type: "message_stop" }],
      ]
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.end(events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join(""))
    })
  })
  return { server, bodies }
}

function turn(message, env, session = `memoryd-test-${process.pid}`) {
  return new Promise((resolve) => {
    const args = ["agent", "--local", "--session-id", session, "-m", message,
      "--model", "anthropic/claude-sonnet-4-6", "--timeout", "120"]
    const child = spawn("openclaw", args, { env: { ...process.env, ...env } })
    let err = ""
    child.stderr.on("data", (chunk) => (err += chunk))
    child.on("close", (code) => resolve({ code, err }))
  })
}

test("a reply gets memoryd's recall before it, and small talk none", async () => {
  const { server, bodies } = fakeAnthropic()
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  try {
    const url = `http://127.0.0.1:${server.address().port}`
    assert.equal(openclaw(["config", "set", "models.providers.anthropic.baseUrl", url]).code, 0)
    assert.equal(openclaw(["config", "set", "plugins.entries.memoryd.hooks.allowConversationAccess", "true"]).code, 0)
    const env = { ANTHROPIC_API_KEY: "sk-ant-test" }
    const asked = await turn("Which database does Alice prefer for the billing service?", env)
    assert.equal(asked.code, 0, asked.err.slice(-2000))
    const sent = bodies.at(-1)
    assert.ok(sent.includes("<memoryd-recall>") && sent.includes(EXPECT_PATH), sent.slice(0, 2000))
    const thanked = await turn("thanks, looks good", env)
    assert.equal(thanked.code, 0, thanked.err.slice(-2000))
    assert.ok(!bodies.at(-1).includes("<memoryd-recall>"))
  } finally {
    server.close()
  }
})

let turns = 0

/** A real agent turn whose model calls `tool` with `input`: the tool result the model was sent back (JSON). */
async function callTool(tool, input) {
  const { server, bodies } = fakeAnthropic({ name: tool, input })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  try {
    const url = `http://127.0.0.1:${server.address().port}`
    assert.equal(openclaw(["config", "set", "models.providers.anthropic.baseUrl", url]).code, 0)
    const session = `memoryd-${tool}-${process.pid}-${turns++}`
    const done = await turn(`use ${tool} please`, { ANTHROPIC_API_KEY: "sk-ant-test" }, session)
    assert.equal(done.code, 0, done.err.slice(-2000))
    const answered = bodies.find((body) => body.includes("tool_result"))
    assert.ok(answered, `no tool result came back for ${tool}`)
    const messages = JSON.parse(answered).messages
    return JSON.stringify(messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((c) => c.type === "tool_result"))
  } finally {
    server.close()
  }
}

test("the agent's memory_search and memory_get tools are answered by memoryd", async () => {
  for (const [tool, input, expected] of [
    ["memory_search", { query: "payment_processor retries" }, "jittered backoff"],
    ["memory_get", { path: EXPECT_PATH, from: 1, lines: 5 }, EXPECT_TEXT],
  ]) {
    const result = await callTool(tool, input)
    assert.ok(result.includes(expected), result.slice(0, 3000))
  }
})

/** The snippets `openclaw memory search` finds for `query`. */
function snippets(query) {
  const found = openclaw(["memory", "search", "--json", query])
  assert.equal(found.code, 0, found.err)
  return JSON.parse(found.out).results.map((r) => r.snippet).join("\n")
}

function undo(count = 1) {
  const undone = openclaw(["memory", "undo", "-n", String(count)])
  assert.equal(undone.code, 0, undone.err)
  return undone.out
}

test("openclaw memory forget --query without --yes shows the matches and changes nothing", () => {
  const asked = openclaw(["memory", "forget", "--query", FORGET_TEXT]) // stdin is a pipe here, not a terminal
  assert.equal(asked.code, 1, asked.err)
  assert.ok(asked.out.includes(FORGET_CITATION.split("#")[0]), asked.out)
  assert.match(asked.err, /nothing forgotten: run again with --yes/)
  assert.ok(snippets(FORGET_TEXT).includes(FORGET_TEXT))
})

test("a line forgotten with openclaw memory forget is gone from search, and openclaw memory undo brings it back", () => {
  const forgot = openclaw(["memory", "forget", FORGET_CITATION])
  assert.equal(forgot.code, 0, forgot.err)
  assert.equal(forgot.out, `memoryd: forgot ${FORGET_CITATION} (undo: openclaw memory undo)\n`)
  assert.ok(!snippets(FORGET_TEXT).includes(FORGET_TEXT))
  const again = openclaw(["memory", "forget", FORGET_CITATION, "--expect", FORGET_TEXT]) // those lines hold other text now
  assert.equal(again.code, 1, again.err)
  assert.match(again.out, /nothing forgotten: .*changed since it was read\ncurrent text of /)
  assert.match(undo(), new RegExp(`^memoryd: undid change \\d+ \\(forget of ${FORGET_CITATION.split("#")[0]}\\)\n$`))
  assert.ok(snippets(FORGET_TEXT).includes(FORGET_TEXT))
})

test("openclaw memory forget --query --yes forgets what it shows", () => {
  const forgot = openclaw(["memory", "forget", "--query", FORGET_TEXT, "--yes"])
  assert.equal(forgot.code, 0, forgot.err)
  const count = Number(forgot.out.match(/undo -n (\d+)/)?.[1] ?? 1)
  assert.match(forgot.out, new RegExp(`^memoryd: forgot .*${FORGET_CITATION.split("#")[0]}`))
  assert.ok(!snippets(FORGET_TEXT).includes(FORGET_TEXT))
  assert.equal(undo(count).trim().split("\n").length, count)
  assert.ok(snippets(FORGET_TEXT).includes(FORGET_TEXT))
})

test("the agent's memory_forget and memory_update tools change memory, and undo puts it back", async () => {
  const forgot = await callTool("memory_forget", { citation: TOOL_CITATION })
  assert.ok(forgot.includes(`Forgotten: ${TOOL_CITATION}`), forgot.slice(0, 3000))
  assert.ok(!snippets(TOOL_TEXT).includes(TOOL_TEXT))
  assert.match(undo(), /undid change \d+ \(forget of /)
  assert.ok(snippets(TOOL_TEXT).includes(TOOL_TEXT))

  const shown = await callTool("memory_forget", { query: FORGET_TEXT })
  const confirm = shown.match(/confirm=([0-9a-f]+)/)?.[1]
  assert.ok(confirm && shown.includes("These would be forgotten"), shown.slice(0, 3000))
  assert.ok(snippets(FORGET_TEXT).includes(FORGET_TEXT)) // shown, not forgotten yet
  const confirmed = await callTool("memory_forget", { query: FORGET_TEXT, confirm })
  assert.ok(confirmed.includes("Forgotten: "), confirmed.slice(0, 3000))
  assert.ok(!snippets(FORGET_TEXT).includes(FORGET_TEXT))
  const count = (confirmed.match(/Forgotten: ([^"\\]*)/)[1].match(/#L/g) ?? [1]).length
  undo(count)
  assert.ok(snippets(FORGET_TEXT).includes(FORGET_TEXT))

  const replacement = "- The office plant is named Gustavo now."
  const updated = await callTool("memory_update", { citation: TOOL_CITATION, text: replacement, expect: `- ${TOOL_TEXT}.` })
  assert.ok(updated.includes("Updated; now "), updated.slice(0, 3000))
  assert.ok(snippets("office plant Gustavo").includes("Gustavo now"))
  assert.match(undo(), /undid change \d+ \(update of /)
  assert.ok(snippets(TOOL_TEXT).includes(TOOL_TEXT) && !snippets("office plant Gustavo").includes("Gustavo now"))
})

test("removing hands the memory slot back", () => {
  const removed = openclaw(["plugins", "uninstall", "--force", "memoryd"])
  assert.equal(removed.code, 0, removed.err)
  const status = openclaw(["memory", "status"])
  assert.doesNotMatch(status.out, /memoryd:/)
})
