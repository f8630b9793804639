--- `:checkhealth shapels`: the two things that go wrong in practice are an
--- old Neovim and a `shapels` binary that cannot be found (in the project's
--- virtual environment or on PATH).

local M = {}

function M.check()
  vim.health.start('shapels')

  if vim.fn.has('nvim-0.11') == 1 then
    vim.health.ok('Neovim ' .. tostring(vim.version()))
  else
    vim.health.error('Neovim 0.11 or newer is needed (vim.lsp.config / vim.lsp.enable)')
  end

  local config = vim.lsp.config and vim.lsp.config.shapels
  local cmd = config and config.cmd
  local source
  if type(cmd) == 'function' then
    -- The shipped lookup: the project's virtual environment, then PATH,
    -- for the project of a running client, else the current directory.
    local root = (vim.lsp.get_clients({ name = 'shapels' })[1] or {}).root_dir
    cmd, source = require('shapels.server').cmd(root)
  end
  if type(cmd) ~= 'table' or not cmd[1] then
    vim.health.error('no `cmd` for shapels: is editors/nvim on the runtimepath?')
    return
  end
  local where = source == 'venv' and " (the project's virtual environment)"
    or source == 'PATH' and ' (PATH; no .venv/bin/shapels in the project)'
    or ' (set with vim.lsp.config)'
  if vim.fn.executable(cmd[1]) == 1 then
    local version = vim.system({ cmd[1], '--version' }, { text = true }):wait(2000)
    local text = vim.trim(version.stdout or '')
    vim.health.ok(('`%s` found%s%s'):format(cmd[1], where, text ~= '' and (': ' .. text) or ''))
  else
    vim.health.error(('`%s` is not executable%s'):format(cmd[1], where), {
      "pip install shapels (or uv add --dev shapels) in the project's virtual environment",
      'cargo install --locked --path server/cli, from a clone of shapels',
      "or vim.lsp.config('shapels', { cmd = { '/path/to/shapels', 'lsp' } })",
    })
  end

  local clients = vim.lsp.get_clients({ name = 'shapels' })
  vim.health.info(('%d shapels client(s) running'):format(#clients))
end

return M
