-- :checkhealth memoryd
local M = {}

local function reporter()
  if vim.health and vim.health.start then
    return vim.health.start, vim.health.ok, vim.health.warn, vim.health.error
  end
  local h = require('health') -- Neovim 0.7
  return h.report_start, h.report_ok, h.report_warn, h.report_error
end

function M.check()
  local start, ok, warn, error = reporter()
  start('memoryd')
  local memoryd = require('memoryd')
  local socket = memoryd.socket_path()
  if vim.fn.has('nvim-0.7') == 1 then ok('Neovim >= 0.7') else error('Neovim 0.7 or newer is needed') end
  local status, err = memoryd.status()
  if not status then
    error(err)
    return
  end
  ok(string.format('daemon %s (pid %d) on %s', status.daemon.version, status.daemon.pid, socket))
  for _, agent in ipairs(status.agents) do
    local line = string.format('agent %s: %d files, %d chunks', agent.agent, agent.files, agent.chunks)
    if agent.vector_available then
      ok(line .. ', hybrid search with ' .. tostring(agent.provider) .. '/' .. tostring(agent.model))
    else
      warn(line .. ', keyword-only: ' .. tostring(agent.fallback_reason))
    end
  end
end

return M
