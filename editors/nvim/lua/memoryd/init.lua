-- memoryd for Neovim: search an agent's memory into the quickfix list, append selections to it.
-- Talks msgpack-rpc to the memoryd daemon over its Unix socket; needs nothing beyond Neovim >= 0.7.
local M = {}

M.config = {
  socket = nil,        -- default: $MEMORYD_SOCKET, else $XDG_RUNTIME_DIR/memoryd/memoryd.sock, else ~/.local/state/...
  agent = nil,         -- default: the daemon's default agent
  max_results = 10,
  open_quickfix = true,
}

local chan = nil

local function default_socket()
  local env = vim.env.MEMORYD_SOCKET
  if env and env ~= '' then return env end
  if vim.fn.has('mac') == 1 then
    return vim.fn.expand('~/Library/Application Support/memoryd/memoryd.sock')
  end
  local runtime = vim.env.XDG_RUNTIME_DIR
  if runtime and runtime ~= '' then return runtime .. '/memoryd/memoryd.sock' end
  local state = vim.env.XDG_STATE_HOME
  if not state or state == '' then state = vim.fn.expand('~/.local/state') end
  return state .. '/memoryd/run/memoryd.sock'
end

function M.socket_path()
  return M.config.socket or default_socket()
end

local function connect()
  if chan then return chan end
  local ok, result = pcall(vim.fn.sockconnect, 'pipe', M.socket_path(), { rpc = true })
  if not ok or result == 0 then
    return nil, 'memoryd is not running (no daemon at ' .. M.socket_path() .. '). Start it with: memoryd run'
  end
  chan = result
  return chan
end

-- Methods that only read: safe to send again after the connection was lost before the answer came.
local idempotent = {
  ping = true,
  search = true,
  recall_log = true,
  get = true,
  notes = true,
  changes = true,
  status = true,
  agents = true,
}

-- One request; after a lost connection (a restarted daemon) it reconnects and resends only a method that
-- reads, never a write, which may already have been applied. Returns result or nil, message.
function M.request(method, params)
  for _ = 1, 2 do
    local c, err = connect()
    if not c then return nil, err end
    local ok, result = pcall(vim.fn.rpcrequest, c, method, params or vim.empty_dict())
    if ok then return result end
    local message = tostring(result)
    if message:find('closed') or message:find('invalid channel') then
      chan = nil
      if not idempotent[method] then
        return nil, 'memoryd closed the connection before answering ' .. method .. '; it may or may not have been applied'
      end
    else
      -- memoryd answers errors as {code, message} maps, which Neovim reports as "unknown error".
      return nil, 'memoryd ' .. method .. ' failed (see `memctl ' .. method .. '` for details): ' .. message
    end
  end
  return nil, 'memoryd connection lost'
end

local function with_agent(params)
  if M.config.agent then params.agent = M.config.agent end
  if next(params) == nil then return vim.empty_dict() end -- {} would be sent as an empty array
  return params
end

local workspaces = {}

local function workspace_of(agent)
  local key = agent or ''
  if workspaces[key] then return workspaces[key] end
  local agents = M.request('agents') or {}
  for _, a in ipairs(agents) do
    if (agent and a.id == agent) or (not agent and a.default) then
      workspaces[key] = a.workspace
    end
  end
  return workspaces[key]
end

local function absolute(path, workspace)
  if path:sub(1, 1) == '/' or not workspace then return path end
  return workspace .. '/' .. path
end

-- :MemorySearch {query}: results go to the quickfix list, one entry per citation.
function M.search(query, opts)
  opts = opts or {}
  if not query or query == '' then
    vim.notify('MemorySearch: give a query', vim.log.levels.WARN)
    return
  end
  local result, err = M.request('search', with_agent({ query = query, max_results = opts.max_results or M.config.max_results }))
  if not result then
    vim.notify(err, vim.log.levels.ERROR)
    return
  end
  local workspace = workspace_of(M.config.agent)
  local items = {}
  for _, hit in ipairs(result.results) do
    local first = (hit.snippet:gsub('\n.*', ''))
    table.insert(items, {
      filename = absolute(hit.path, workspace),
      lnum = hit.start_line,
      end_lnum = hit.end_line,
      text = string.format('[%.2f] %s', hit.score, first),
    })
  end
  vim.fn.setqflist({}, ' ', { title = 'memory: ' .. query, items = items })
  if M.config.open_quickfix and #items > 0 then vim.cmd('copen') end
  vim.notify(string.format('memory: %d results (%s, %.1f ms)', #items, result.mode, result.took_ms))
  return items
end

-- :MemoryWrite (with a range): append the selected lines to today's memory note.
function M.write(line1, line2, path)
  local lines = vim.api.nvim_buf_get_lines(0, line1 - 1, line2, false)
  local text = table.concat(lines, '\n')
  if text:match('^%s*$') then
    vim.notify('MemoryWrite: nothing selected', vim.log.levels.WARN)
    return
  end
  local params = with_agent({ text = text })
  if path and path ~= '' then params.path = path end
  local result, err = M.request('write', params)
  if not result then
    vim.notify(err, vim.log.levels.ERROR)
    return
  end
  vim.notify('memory: saved ' .. result.citation)
  return result
end

-- :MemoryStatus
function M.status()
  local result, err = M.request('status', with_agent({}))
  if not result then return nil, err end
  return result
end

function M.setup(opts)
  M.config = vim.tbl_extend('force', M.config, opts or {})
  chan = nil
  workspaces = {}
end

return M
