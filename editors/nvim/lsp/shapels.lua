--- shapels: PyTorch tensor shapes as inlay hints, hover and diagnostics.
---
--- Neovim >= 0.11 finds this file on 'runtimepath' as `lsp/shapels.lua`, so
--- `vim.lsp.enable('shapels')` is all a user needs once this directory is on
--- the runtimepath; `vim.lsp.config('shapels', {...})` overrides any field.
--- The server reads the `shapels` section of `settings` (Neovim sends it with
--- workspace/didChangeConfiguration and answers workspace/configuration).

---@type vim.lsp.Config
return {
  -- The project's own shapels when its virtual environment has one
  -- (`.venv/bin/shapels`, `venv/bin/shapels`, in the root or above), else
  -- `shapels` on PATH; see lua/shapels/server.lua. A `cmd` list given to
  -- vim.lsp.config replaces this lookup.
  cmd = function(dispatchers, config)
    local cmd = require('shapels.server').cmd(config and config.root_dir)
    return vim.lsp.rpc.start(cmd, dispatchers, {
      cwd = config and config.cmd_cwd,
      env = config and config.cmd_env,
      detached = config and config.detached,
    })
  end,
  filetypes = { 'python' },
  -- A Python project's root holds one of these; the server reads
  -- `[tool.shapels]` from the pyproject.toml it finds there.
  root_markers = { 'pyproject.toml', 'setup.py', '.git' },
  settings = {
    shapels = {
      -- The fake-mode flags are deliberately left unset here: a value sent
      -- by the editor would hide the project's own `[tool.shapels]` table.
      -- Set them through vim.lsp.config when a project has none:
      --   allowNonFakeInputs = true,    -- false: report real tensors meeting fake ones
      --   allowFallbackKernels = true,  -- ops with no shape rule are silently unknown
      --   staticShapes = false,         -- keep call-site sizes symbolic
      inlayHints = {
        enable = true,
        -- "shape" draws `: [8, 128]`; "full" adds dtype and device.
        detail = 'shape',
        -- "all", "parameters" (function parameters only) or "changes"
        -- (parameters, and names whose shape just changed).
        show = 'all',
        -- true: no hint where a name is bound again to the shape it had
        -- (`x = F.relu(x)`).
        hideRepeats = false,
        -- The longest hint in characters, abbreviated past it (`[B, …, C]`;
        -- the tooltip and hover keep the whole shape). 0: no limit.
        maxLength = 0,
      },
    },
  },
}
