--- End-to-end test of imports between files in a real Neovim: a package
--- whose `model.py` uses a block from `layers.py` with the wrong width.
--- The error shows in `model.py`, pointing at `layers.py`; fixing
--- `layers.py` in another buffer (unsaved) clears it and changes the
--- model's hints, without touching `model.py`.
---
--- Run as:
---   nvim --headless --clean -l tests/nvim/workspace.lua SHAPELS REPO DIR REPORT
--- where DIR is a scratch copy of tests/nvim/fixtures/package.

local bin, repo, dir, report_path = arg[1], arg[2], arg[3], arg[4]
assert(bin and repo and dir and report_path, 'usage: workspace.lua SHAPELS REPO DIR REPORT')

local WAIT_MS = tonumber(os.getenv('SHAPELS_NVIM_WAIT_MS') or '') or 8000
local report = { nvim = tostring(vim.version()), checks = {}, observed = {}, log = vim.lsp.get_log_path() }

local function check(name, ok, detail)
  table.insert(report.checks, { name = name, ok = ok and true or false, detail = detail or '' })
  return ok
end

local function inspect(value)
  return vim.inspect(value, { newline = ' ', indent = '' })
end

local function poll(fn)
  local deadline = vim.uv.now() + WAIT_MS
  while true do
    local value = fn()
    if value or vim.uv.now() >= deadline then
      return value
    end
    vim.wait(50)
  end
end

local function run()
  vim.opt.runtimepath:prepend(repo .. '/editors/nvim')
  vim.lsp.config('shapels', { cmd = { bin, 'lsp' } })
  vim.lsp.enable('shapels')
  require('shapels').setup({})

  vim.cmd.edit(vim.fn.fnameescape(dir .. '/pkg/model.py'))
  local model = vim.api.nvim_get_current_buf()
  local client = poll(function()
    return vim.lsp.get_clients({ bufnr = model, name = 'shapels' })[1]
  end)
  if not check('client attaches to model.py', client ~= nil, 'no shapels client') then
    return
  end
  report.observed.offset_encoding = client.offset_encoding

  local function errors()
    return vim.diagnostic.get(model, { severity = vim.diagnostic.severity.ERROR })
  end
  local first = poll(function()
    return errors()[1]
  end)
  report.observed.diagnostics = vim.diagnostic.get(model)
  local related = first and vim.tbl_get(first, 'user_data', 'lsp', 'relatedInformation') or {}
  check(
    'the error caused in layers.py is shown in model.py, at the call',
    first and first.lnum == 7 and first.code == 'linear-shape'
      and first.message:find('layers.py:10', 1, true) ~= nil,
    inspect(first)
  )
  check(
    'its related information points at layers.py',
    related[1] and related[1].location.uri:find('/pkg/layers.py', 1, true) ~= nil
      and related[1].location.range.start.line == 9,
    inspect(related)
  )

  local function hint_on(buf, line)
    local client_hints, err = client:request_sync('textDocument/inlayHint', {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      range = { start = { line = 0, character = 0 }, ['end'] = { line = 100, character = 0 } },
    }, 2000, buf)
    if not client_hints or client_hints.err then
      return nil, err
    end
    for _, h in ipairs(client_hints.result or {}) do
      if h.position.line == line then
        return type(h.label) == 'string' and h.label or h.label[1].value
      end
    end
  end

  -- Fix the width in layers.py, in a buffer of its own, without saving.
  vim.cmd.split(vim.fn.fnameescape(dir .. '/pkg/layers.py'))
  local layers = vim.api.nvim_get_current_buf()
  poll(function()
    return vim.lsp.get_clients({ bufnr = layers, name = 'shapels' })[1]
  end)
  local line = vim.api.nvim_buf_get_lines(layers, 6, 7, false)[1]
  local col = line:find('16', 1, true) - 1
  vim.api.nvim_buf_set_text(layers, 6, col, 6, col + 2, { 'dim' })
  local cleared = poll(function()
    return #errors() == 0
  end)
  check('fixing layers.py clears the error in model.py', cleared, inspect(vim.diagnostic.get(model)))
  local hint = poll(function()
    local label = hint_on(model, 7)
    return label == ': [2, 5, 32]' and label
  end)
  check('the model\'s hint of `h` follows', hint ~= nil, inspect(hint_on(model, 7)))
  check('model.py was not touched', not vim.bo[model].modified, 'modified = ' .. tostring(vim.bo[model].modified))

  client:stop()
  poll(function()
    return client:is_stopped()
  end)
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  check('the test script ran to the end', false, tostring(err))
end
local all_ok = #report.checks > 0
for _, c in ipairs(report.checks) do
  all_ok = all_ok and c.ok
end
report.ok = all_ok
local f = assert(io.open(report_path, 'w'))
f:write(vim.json.encode(report))
f:close()
vim.cmd(all_ok and 'qall!' or 'cquit! 1')
