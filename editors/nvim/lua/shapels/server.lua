--- Which `shapels` binary to run: the one in the project's virtual
--- environment when there is one (`pip install shapels` or `uv add --dev
--- shapels` put it in `.venv/bin/`), else `shapels` from PATH.
---
--- `lsp/shapels.lua` asks this module for its command each time a server
--- starts, with the project root Neovim found, so each project gets its own
--- environment's binary.

local M = {}

--- The directory names of a project's virtual environment, in the order
--- they are tried: uv's and Poetry's `.venv`, then the `venv` of many guides.
M.venv_names = { '.venv', 'venv' }

local function binary_in(env)
  if vim.fn.has('win32') == 1 then
    return vim.fs.joinpath(env, 'Scripts', 'shapels.exe')
  end
  return vim.fs.joinpath(env, 'bin', 'shapels')
end

--- The `shapels` of a virtual environment in `dir` or the nearest directory
--- above it that has one, or nil.
---@param dir string
---@return string?
function M.in_venv(dir)
  dir = vim.fs.normalize(vim.fn.fnamemodify(dir, ':p'))
  local dirs = { dir }
  for parent in vim.fs.parents(dir) do
    table.insert(dirs, parent)
  end
  for _, d in ipairs(dirs) do
    for _, name in ipairs(M.venv_names) do
      local candidate = binary_in(vim.fs.joinpath(d, name))
      if vim.fn.executable(candidate) == 1 then
        return candidate
      end
    end
  end
  return nil
end

--- The server command for a project whose root is `root_dir` (the current
--- directory when nil): the virtual environment's binary, else PATH's.
---@param root_dir string?
---@return string[] cmd
---@return string source  'venv' or 'PATH'
function M.cmd(root_dir)
  local venv = M.in_venv(root_dir or vim.uv.cwd() or '.')
  if venv then
    return { venv, 'lsp' }, 'venv'
  end
  return { 'shapels', 'lsp' }, 'PATH'
end

return M
