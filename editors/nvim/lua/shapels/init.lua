--- shapels for Neovim >= 0.11: `setup()` and the `:ShapelsToggleHints` command.
---
--- The server configuration itself lives in `lsp/shapels.lua`, which Neovim
--- loads on its own; this module only adds what a plain `vim.lsp.enable`
--- cannot: turning Neovim's inlay hints on where shapels attaches (they are
--- off by default, and shape hints are the point of shapels) and a command to
--- toggle them.

local M = {}

--- The name shapels is registered under in `vim.lsp.config`.
M.name = 'shapels'

---@class shapels.Opts
---@field enable? boolean       Call `vim.lsp.enable('shapels')` (default true).
---@field inlay_hints? boolean  Show inlay hints in buffers shapels attaches to (default true).
---@field cmd? string[]         Override the server command, e.g. `{ '/path/to/shapels', 'lsp' }`.
---@field settings? table       Merged into the `shapels` settings section (camelCase keys).

---@type shapels.Opts
local defaults = { enable = true, inlay_hints = true }

--- Toggle Neovim's inlay hints in one buffer (the current one by default) or,
--- with `global = true`, everywhere.
---
--- Neovim shows or hides inlay hints per buffer for all language servers at
--- once, so this also hides the hints of any other server in that buffer.
--- That is the built-in behaviour users already know from
--- `vim.lsp.inlay_hint.enable`, rather than a shapels-only switch that would
--- need a round trip through the server's settings.
---@param opts? { bufnr?: integer, global?: boolean }
---@return boolean enabled  whether hints are now shown
function M.toggle_hints(opts)
  opts = opts or {}
  if opts.global then
    local enabled = not vim.lsp.inlay_hint.is_enabled()
    vim.lsp.inlay_hint.enable(enabled)
    return enabled
  end
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local enabled = not vim.lsp.inlay_hint.is_enabled({ bufnr = bufnr })
  vim.lsp.inlay_hint.enable(enabled, { bufnr = bufnr })
  return enabled
end

--- Turn hints on in every buffer a shapels client is already attached to, so
--- that calling `setup()` late (after a file was opened) behaves the same as
--- calling it early.
local function enable_hints_in_attached_buffers()
  for _, client in ipairs(vim.lsp.get_clients({ name = M.name })) do
    for bufnr in pairs(client.attached_buffers) do
      vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
    end
  end
end

---@param opts? shapels.Opts
function M.setup(opts)
  if vim.fn.has('nvim-0.11') == 0 then
    vim.notify('shapels: Neovim 0.11 or newer is needed for vim.lsp.config', vim.log.levels.ERROR)
    return
  end
  opts = vim.tbl_deep_extend('force', defaults, opts or {})

  -- Only the fields the user gave are passed on, so that everything else
  -- keeps coming from lsp/shapels.lua and from the user's own
  -- vim.lsp.config calls.
  local overrides = {}
  if opts.cmd then
    overrides.cmd = opts.cmd
  end
  if opts.settings then
    overrides.settings = { shapels = opts.settings }
  end
  if next(overrides) then
    vim.lsp.config(M.name, overrides)
  end

  -- The augroup is cleared on every call so that calling setup() twice does
  -- not stack two autocommands.
  local group = vim.api.nvim_create_augroup('shapels', { clear = true })
  if opts.inlay_hints then
    vim.api.nvim_create_autocmd('LspAttach', {
      group = group,
      desc = 'shapels: show tensor shapes as inlay hints',
      callback = function(ev)
        local client = vim.lsp.get_client_by_id(ev.data.client_id)
        if client and client.name == M.name then
          vim.lsp.inlay_hint.enable(true, { bufnr = ev.buf })
        end
      end,
    })
    enable_hints_in_attached_buffers()
  end

  vim.api.nvim_create_user_command('ShapelsToggleHints', function(cmd)
    local enabled = M.toggle_hints({ global = cmd.bang })
    vim.notify(
      ('shapels: inlay hints %s%s'):format(enabled and 'on' or 'off', cmd.bang and ' everywhere' or ''),
      vim.log.levels.INFO
    )
  end, {
    bang = true,
    desc = 'Toggle inlay hints in this buffer (with !, in every buffer)',
  })

  if opts.enable then
    vim.lsp.enable(M.name)
  end
end

return M
