// A msgpack-rpc client for the memoryd daemon's Unix socket: [0, id, method, [params]] -> [1, id, error, result].
import { createConnection } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { decodeMultiStream, encode } from "@msgpack/msgpack";

export class MemorydError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "MemorydError";
  }
}

/** Where the daemon listens, by the rules memoryd itself follows (client/memoryd_client/protocol/paths.py). */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env, platform: string = process.platform): string {
  if (env.MEMORYD_SOCKET) return env.MEMORYD_SOCKET.replace(/^~(?=\/|$)/, homedir());
  if (platform === "darwin") return join(homedir(), "Library", "Application Support", "memoryd", "memoryd.sock");
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, "memoryd", "memoryd.sock");
  const state = env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  return join(state, "memoryd", "run", "memoryd.sock");
}

export interface CallOptions {
  socket?: string;
  timeoutMs?: number;
}

let nextId = 1;

/** One call on a connection of its own; rejects with a MemorydError that says what to do. */
export async function call<T = unknown>(method: string, params: Record<string, unknown>, options: CallOptions = {}): Promise<T> {
  const socket = options.socket || defaultSocketPath();
  const timeoutMs = options.timeoutMs ?? 30_000;
  const id = nextId++ % 0xffffffff;
  const named = Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined && value !== null));
  const connection = createConnection(socket);
  const timer = setTimeout(() => connection.destroy(new MemorydError("timeout", `memoryd did not answer ${method} within ${timeoutMs} ms`)), timeoutMs);
  try {
    await new Promise<void>((resolve, reject) => {
      connection.once("connect", resolve);
      connection.once("error", reject);
    });
    connection.write(encode([0, id, method, [named]]));
    const lost = () => new MemorydError("connection_lost", `memoryd closed the connection before it answered ${method}`);
    const closed = new Promise<never>((_, reject) => connection.once("close", () => reject(lost())));
    closed.catch(() => undefined); // the answer may win the race
    const answer = (async () => {
      for await (const message of decodeMultiStream(connection)) {
        if (!Array.isArray(message) || message[0] !== 1 || message[1] !== id) continue; // notices, other replies
        const [, , error, result] = message as [number, number, unknown, T];
        if (error) {
          const { code = "error", message: text = String(error) } = error as { code?: string; message?: string };
          throw new MemorydError(code, text);
        }
        return result;
      }
      throw lost();
    })();
    return await Promise.race([answer, closed]);
  } catch (error) {
    if (error instanceof MemorydError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ECONNREFUSED") {
      throw new MemorydError("not_running", `memoryd is not running (no daemon at ${socket}). Start it with: memoryd run`);
    }
    throw new MemorydError("connect_error", `cannot reach memoryd at ${socket}: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
    connection.destroy();
  }
}
