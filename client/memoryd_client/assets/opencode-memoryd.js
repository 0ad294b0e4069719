// memoryd for OpenCode: written by `memctl integrations install opencode`, removed by `... remove opencode`.
// Every prompt gets the memories that bear on it (in the system prompt of that turn), the session is written as
// a transcript memoryd indexes, and a compaction is asked to keep what matters. A hook never blocks OpenCode:
// when memoryd is down or slow it adds nothing (`memctl hook --log` says why).
import { spawn } from "node:child_process"
import { chmodSync, mkdirSync, renameSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const MEMCTL = __MEMCTL__
const AGENT = __AGENT_ARGS__
const TRANSCRIPTS = __TRANSCRIPTS__
const SESSION_ID = /^[A-Za-z0-9_.-]+$/ // a transcript's file name: nothing that could point outside TRANSCRIPTS
const RECALL_MS = 3000
const SYNC_MS = 30000
const FLUSH =
  "Before this conversation is summarised: durable facts, decisions and preferences from it should be saved " +
  "with the memory_write tool (one self-contained statement each) if they are not saved yet; the summary " +
  "should say which were saved."

function hook(event, payload, ms) {
  return new Promise((resolve) => {
    let out = ""
    let child
    try {
      child = spawn(MEMCTL, ["hook", "opencode", event, ...AGENT], { stdio: ["pipe", "pipe", "ignore"] })
    } catch {
      return resolve("")
    }
    const timer = setTimeout(() => {
      child.kill()
      resolve("")
    }, ms)
    child.stdout.on("data", (chunk) => (out += chunk))
    child.on("error", () => {
      clearTimeout(timer)
      resolve("")
    })
    child.on("close", () => {
      clearTimeout(timer)
      resolve(out.trim())
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(payload))
  })
}

function textOf(parts) {
  return (parts || [])
    .filter((part) => part.type === "text" && !part.synthetic && !part.ignored && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n")
}

async function writeTranscript(client, sessionID) {
  const found = await client.session.messages({ path: { id: sessionID } })
  const lines = []
  for (const entry of found.data || []) {
    const role = entry.info && entry.info.role
    const text = textOf(entry.parts)
    if ((role === "user" || role === "assistant") && text) {
      const created = entry.info.time && entry.info.time.created
      const content = [{ type: "text", text }]
      lines.push(JSON.stringify({ type: "message", timestamp: created, message: { role, content } }))
    }
  }
  if (!lines.length || !SESSION_ID.test(sessionID)) return null
  mkdirSync(TRANSCRIPTS, { recursive: true, mode: 0o700 }) // conversations are private: the user's alone
  const path = join(TRANSCRIPTS, `${sessionID}.jsonl`)
  const partial = `${path}.${process.pid}.tmp`
  try {
    writeFileSync(partial, lines.join("\n") + "\n", { mode: 0o600 })
    chmodSync(partial, 0o600) // also when a partial file was left behind with another mode
    renameSync(partial, path)
  } catch (error) {
    try {
      unlinkSync(partial)
    } catch {}
    throw error
  }
  return path
}

export const Memoryd = async ({ client }) => {
  const recalled = new Map()
  return {
    "chat.message": async (input, output) => {
      const prompt = textOf(output.parts)
      const transcript = join(TRANSCRIPTS, `${input.sessionID}.jsonl`)
      const block = prompt
        ? await hook("user-prompt-submit", { prompt, session_id: input.sessionID, transcript_path: transcript }, RECALL_MS)
        : ""
      recalled.set(input.sessionID, block)
    },
    "experimental.chat.system.transform": async (input, output) => {
      const block = input.sessionID ? recalled.get(input.sessionID) : ""
      if (block) output.system.push(block)
    },
    "experimental.session.compacting": async (input, output) => {
      output.context.push(FLUSH)
      try {
        await writeTranscript(client, input.sessionID)
      } catch {}
      await hook("session-compacting", { session_id: input.sessionID }, SYNC_MS)
    },
    event: async ({ event }) => {
      if (event.type !== "session.idle") return
      const sessionID = event.properties && event.properties.sessionID
      if (!sessionID) return
      try {
        await writeTranscript(client, sessionID)
      } catch {}
      await hook("session-idle", { session_id: sessionID }, SYNC_MS)
    },
  }
}
