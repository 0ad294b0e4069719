if vim.g.loaded_memoryd then return end
vim.g.loaded_memoryd = true

vim.api.nvim_create_user_command('MemorySearch', function(opts)
  require('memoryd').search(opts.args)
end, { nargs = '+', desc = 'Search memoryd into the quickfix list' })

vim.api.nvim_create_user_command('MemoryWrite', function(opts)
  require('memoryd').write(opts.line1, opts.line2, opts.args)
end, { range = true, nargs = '?', desc = 'Append the selected lines to memory (optional: note path)' })

vim.api.nvim_create_user_command('MemoryStatus', function()
  local status, err = require('memoryd').status()
  if not status then
    vim.notify(err, vim.log.levels.ERROR)
    return
  end
  for _, agent in ipairs(status.agents) do
    print(string.format('%s: %d files, %d chunks, %s', agent.agent, agent.files, agent.chunks,
      agent.vector_available and 'hybrid' or ('keyword-only: ' .. tostring(agent.fallback_reason))))
  end
end, { desc = 'memoryd daemon and index status' })
