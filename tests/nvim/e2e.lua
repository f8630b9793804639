--- End-to-end test of shapels in a real Neovim (>= 0.11), through the plugin
--- in editors/nvim exactly as a user would load it.
---
--- Run as:
---   nvim --headless --clean -l tests/nvim/e2e.lua SHAPELS REPO FILE REPORT [MODE]
--- where SHAPELS is the server binary, REPO the repository root (for
--- editors/nvim), FILE a scratch copy of tests/nvim/fixtures/model.py (the
--- test edits the buffer; it never writes it, but a copy keeps the fixture
--- safe all the same), REPORT the path of the JSON report to write, and MODE
--- one of `default` (Neovim offers utf-8, utf-16 and utf-32 and the server
--- picks), `utf-16` (only utf-16 is offered, as VS Code does), or `venv`
--- (no `cmd` is given: the plugin must find SHAPELS itself, as the
--- project's `.venv/bin/shapels` next to FILE, before a `shapels` on PATH).
---
--- The script never stops at the first failure: every check is recorded in
--- the report with what was expected and what was seen, so that one run tells
--- the whole story. tests/nvim/nvim_e2e.rs reads the report and asserts on it.

local bin, repo, file, report_path, mode = arg[1], arg[2], arg[3], arg[4], arg[5] or 'default'
assert(bin and repo and file and report_path, 'usage: e2e.lua SHAPELS REPO FILE REPORT [MODE]')

-- How long to wait for anything the server does asynchronously. Generous,
-- because the server debounces analysis and CI machines are slow, but finite
-- so that a silent server fails the run instead of hanging it.
local WAIT_MS = tonumber(os.getenv('SHAPELS_NVIM_WAIT_MS') or '') or 8000
local POLL_MS = 50

---@class Check
---@field name string
---@field ok boolean
---@field detail string

local report = {
  mode = mode,
  nvim = tostring(vim.version()),
  ---@type Check[]
  checks = {},
  -- Raw things seen along the way, to debug a failure without re-running.
  observed = {},
  log = vim.lsp.get_log_path(),
}

--- Record one check. `detail` says what was expected and what was seen.
local function check(name, ok, detail)
  table.insert(report.checks, { name = name, ok = ok and true or false, detail = detail or '' })
  return ok
end

local function inspect(value)
  return vim.inspect(value, { newline = ' ', indent = '' })
end

local function write_report()
  local all_ok = #report.checks > 0
  for _, c in ipairs(report.checks) do
    all_ok = all_ok and c.ok
  end
  report.ok = all_ok
  local f = assert(io.open(report_path, 'w'))
  f:write(vim.json.encode(report))
  f:close()
  return all_ok
end

-- Once one wait has run out, the server is known to be slow or broken; the
-- remaining waits are cut short so that a failing run still ends in seconds
-- and reports every check, instead of waiting out each one in turn.
local timed_out = false

--- Poll `fn` until it returns a truthy value or the timeout passes. `fn` may
--- itself call request_sync (which runs its own event loop), so this is a
--- plain loop around vim.wait rather than vim.wait with `fn` as condition.
local function poll(fn, timeout)
  timeout = timeout or WAIT_MS
  if timed_out then
    timeout = math.min(timeout, 1000)
  end
  local deadline = vim.uv.now() + timeout
  while true do
    local value = fn()
    if value then
      return value
    end
    if vim.uv.now() >= deadline then
      timed_out = true
      return nil
    end
    vim.wait(POLL_MS)
  end
end

-- A hint label is a string or a list of label parts; the test compares text.
local function label_text(label)
  if type(label) == 'string' then
    return label
  end
  local parts = {}
  for _, part in ipairs(label or {}) do
    table.insert(parts, part.value or '')
  end
  return table.concat(parts)
end

-- Hover contents come as MarkupContent, a MarkedString or a list of those.
local function hover_text(contents)
  if type(contents) == 'string' then
    return contents
  end
  if type(contents) ~= 'table' then
    return ''
  end
  if contents.value then
    return contents.value
  end
  local parts = {}
  for _, item in ipairs(contents) do
    table.insert(parts, hover_text(item))
  end
  return table.concat(parts, '\n')
end

local function run()
  -- The plugin under test, as a user's runtimepath would carry it.
  vim.opt.runtimepath:prepend(repo .. '/editors/nvim')

  -- 1. The shipped config file, read directly: what a user gets before
  --    overriding anything.
  local shipped = dofile(repo .. '/editors/nvim/lsp/shapels.lua')
  check(
    'lsp/shapels.lua: cmd, filetypes, root_markers',
    type(shipped.cmd) == 'function'
      and vim.deep_equal(shipped.filetypes, { 'python' })
      and vim.deep_equal(shipped.root_markers, { 'pyproject.toml', 'setup.py', '.git' }),
    inspect({ cmd = shipped.cmd, filetypes = shipped.filetypes, root_markers = shipped.root_markers })
  )
  -- Where the shipped `cmd` looks: the project's virtual environment, then PATH.
  local server = require('shapels.server')
  local project = vim.fs.dirname(file)
  local found, source = server.cmd(project)
  if mode == 'venv' then
    local venv_bin = vim.fs.joinpath(project, '.venv', 'bin', 'shapels')
    check(
      "shapels.server finds the project's .venv/bin/shapels",
      vim.deep_equal(found, { venv_bin, 'lsp' }) and source == 'venv'
        and vim.deep_equal(server.cmd(vim.fs.joinpath(project, 'pkg', 'sub')), { venv_bin, 'lsp' }),
      inspect({ found = found, source = source, expected = venv_bin })
    )
  else
    check(
      'shapels.server falls back to PATH without a virtual environment',
      vim.deep_equal(found, { 'shapels', 'lsp' }) and source == 'PATH',
      inspect({ found = found, source = source })
    )
  end
  local s = shipped.settings and shipped.settings.shapels or {}
  check(
    'lsp/shapels.lua: settings.shapels.inlayHints',
    type(s.inlayHints) == 'table' and s.inlayHints.enable == true and s.inlayHints.detail == 'shape',
    inspect(shipped.settings)
  )

  -- 2. Configure and enable the way the README tells users to. The test
  --    binary replaces `shapels` on PATH; `utf-16` mode narrows what the
  --    client offers so the server must speak UTF-16.
  local overrides = {
    -- A server that dies early explains every failure after it.
    on_exit = function(code, signal)
      report.observed.server_exit = { code = code, signal = signal }
    end,
  }
  if mode ~= 'venv' then
    overrides.cmd = { bin, 'lsp' }
  end
  if mode == 'utf-16' then
    overrides.capabilities = { general = { positionEncodings = { 'utf-16' } } }
  end
  vim.lsp.config('shapels', overrides)
  vim.lsp.enable('shapels')
  require('shapels').setup({ settings = { inlayHints = { detail = 'shape' } } })

  local resolved = vim.lsp.config.shapels or {}
  check(
    'vim.lsp.config merges lsp/shapels.lua with the user override',
    (mode == 'venv' and type(resolved.cmd) == 'function' or type(resolved.cmd) == 'table' and resolved.cmd[1] == bin)
      and vim.deep_equal(resolved.filetypes, { 'python' })
      and vim.tbl_get(resolved, 'settings', 'shapels', 'inlayHints', 'enable') == true,
    inspect({ cmd = resolved.cmd, filetypes = resolved.filetypes, settings = resolved.settings })
  )
  check(
    ':ShapelsToggleHints exists after setup()',
    vim.fn.exists(':ShapelsToggleHints') == 2,
    'exists() = ' .. vim.fn.exists(':ShapelsToggleHints')
  )

  local attached_client
  vim.api.nvim_create_autocmd('LspAttach', {
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == 'shapels' then
        attached_client = client
      end
    end,
  })

  -- 3. Open the file; the FileType autocmd of vim.lsp.enable starts the server.
  vim.cmd.edit(vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(buf)
  check('filetype is python', vim.bo[buf].filetype == 'python', 'filetype = ' .. vim.bo[buf].filetype)

  -- Stop waiting as soon as the server is gone: it will not attach.
  poll(function()
    return attached_client or report.observed.server_exit
  end)
  local client = attached_client
  if
    not check(
      'client attaches',
      client ~= nil,
      ('no LspAttach for shapels within %d ms (server exit: %s); see %s'):format(
        WAIT_MS,
        inspect(report.observed.server_exit or 'still running'),
        report.log
      )
    )
  then
    return
  end
  report.observed.offset_encoding = client.offset_encoding
  report.observed.root_dir = client.root_dir
  report.observed.server_info = client.server_info
  report.observed.capabilities = client.server_capabilities
  -- The pyproject.toml next to the file is the nearest root marker.
  local function real(path)
    return path and vim.uv.fs_realpath(path) or path
  end
  check(
    'root_dir is the directory with pyproject.toml',
    real(client.root_dir) == real(vim.fs.dirname(file)),
    ('root_dir = %s, file = %s'):format(tostring(client.root_dir), file)
  )
  local caps = client.server_capabilities or {}
  local sync = caps.textDocumentSync
  local change_kind = type(sync) == 'table' and sync.change or sync
  check('server syncs incrementally', change_kind == 2, 'textDocumentSync = ' .. inspect(sync))
  check('server offers inlay hints', caps.inlayHintProvider ~= nil and caps.inlayHintProvider ~= false, inspect(caps.inlayHintProvider))
  check('server offers hover', caps.hoverProvider ~= nil and caps.hoverProvider ~= false, inspect(caps.hoverProvider))
  if mode == 'utf-16' then
    check('position encoding is utf-16 when only utf-16 is offered', client.offset_encoding == 'utf-16', client.offset_encoding)
  else
    check(
      'position encoding is one Neovim offered',
      vim.tbl_contains({ 'utf-8', 'utf-16', 'utf-32' }, client.offset_encoding),
      client.offset_encoding
    )
  end
  check(
    'setup() turned inlay hints on where shapels attached',
    poll(function()
      return vim.lsp.inlay_hint.is_enabled({ bufnr = buf })
    end, 1000) == true,
    'is_enabled = ' .. tostring(vim.lsp.inlay_hint.is_enabled({ bufnr = buf }))
  )
  local enc = client.offset_encoding

  --- Where the hint of `name` belongs: right after the name, on the line
  --- that contains `anchor` (which starts with the name). Returned both as
  --- an LSP position in the negotiated encoding and as a byte column.
  local function hint_spot(anchor, name)
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    for i, line in ipairs(lines) do
      local col = line:find(anchor, 1, true)
      if col then
        local byte = col - 1 + #name
        return { line = i - 1, character = vim.str_utfindex(line, enc, byte, false), byte = byte }
      end
    end
  end

  local function line_of(anchor)
    for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if line:find(anchor, 1, true) then
        return i - 1
      end
    end
  end

  -- 4. Diagnostics, published on open.
  local function matmul_diagnostic()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == 'matmul-shape' then
        return d
      end
    end
  end
  local diag = poll(matmul_diagnostic)
  report.observed.diagnostics_on_open = vim.diagnostic.get(buf)
  local bad_line = line_of('bad = x @')
  check(
    'matmul-shape error on the `bad` line',
    diag and diag.lnum == bad_line and diag.severity == vim.diagnostic.severity.ERROR,
    ('expected an ERROR with code matmul-shape on line %d (0-based); got %s'):format(
      bad_line,
      inspect(vim.diagnostic.get(buf))
    )
  )
  local stray = {}
  for _, d in ipairs(vim.diagnostic.get(buf, { severity = vim.diagnostic.severity.ERROR })) do
    if d.lnum ~= bad_line then
      table.insert(stray, d)
    end
  end
  check('no error on the valid lines', #stray == 0, inspect(stray))

  -- 5. A raw textDocument/inlayHint request, as any client would send it.
  local function raw_hints()
    local last = vim.api.nvim_buf_line_count(buf) - 1
    local last_text = vim.api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or ''
    local response, err = client:request_sync('textDocument/inlayHint', {
      textDocument = { uri = uri },
      range = {
        start = { line = 0, character = 0 },
        ['end'] = { line = last, character = vim.str_utfindex(last_text, enc) },
      },
    }, 2000, buf)
    if not response then
      return nil, 'no response: ' .. tostring(err)
    end
    if response.err then
      return nil, 'error: ' .. inspect(response.err)
    end
    local hints = {}
    for _, h in ipairs(response.result or {}) do
      table.insert(hints, { line = h.position.line, character = h.position.character, label = label_text(h.label) })
    end
    return hints
  end

  local function find_hint(hints, spot, label)
    for _, h in ipairs(hints or {}) do
      if h.line == spot.line and h.character == spot.character and h.label == label then
        return h
      end
    end
  end

  -- `expected` lists {anchor, name, label}; waits until the server returns all
  -- of them (analysis may lag an edit), then records one check per hint.
  local function expect_raw_hints(step, expected)
    local hints, err
    poll(function()
      hints, err = raw_hints()
      if not hints then
        return false
      end
      for _, e in ipairs(expected) do
        if not find_hint(hints, hint_spot(e[1], e[2]), e[3]) then
          return false
        end
      end
      return true
    end)
    report.observed['raw_hints_' .. step] = hints or err
    for _, e in ipairs(expected) do
      local spot = hint_spot(e[1], e[2])
      check(
        ('%s: raw inlayHint `%s` after %s'):format(step, e[3], e[2]),
        hints and find_hint(hints, spot, e[3]),
        ('expected %q at line %d (0-based) character %d (%s); got %s'):format(
          e[3],
          spot.line,
          spot.character,
          enc,
          hints and inspect(hints) or err
        )
      )
    end
    return hints
  end

  local opened = expect_raw_hints('open', {
    { 'x = torch.randn(8, 128)', 'x', ': [8, 128]' },
    { 'w = torch.randn(128, 10)', 'w', ': [128, 10]' },
    { 'y = x @ w', 'y', ': [8, 10]' },
  })
  if opened then
    local s_spot = hint_spot('s = "', 's')
    local on_s = {}
    for _, h in ipairs(opened) do
      if h.line == s_spot.line and h.character == s_spot.character then
        table.insert(on_s, h)
      end
    end
    check('no hint after the string `s`', #on_s == 0, inspect(on_s))
  end

  -- 6. Neovim's own inlay hints: vim.lsp.inlay_hint.get reports positions as
  --    byte columns after converting from the negotiated encoding, so this
  --    also checks that Neovim and the server agree on columns.
  vim.lsp.inlay_hint.enable(true, { bufnr = buf })
  local function builtin_hint(anchor, name, label)
    local spot = hint_spot(anchor, name)
    for _, item in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
      local h = item.inlay_hint
      if h.position.line == spot.line and h.position.character == spot.byte and label_text(h.label) == label then
        return h
      end
    end
  end
  local function expect_builtin_hint(step, anchor, name, label)
    local found = poll(function()
      return builtin_hint(anchor, name, label)
    end)
    local seen = {}
    for _, item in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
      local h = item.inlay_hint
      table.insert(seen, { line = h.position.line, byte = h.position.character, label = label_text(h.label) })
    end
    local spot = hint_spot(anchor, name)
    return check(
      ('%s: vim.lsp.inlay_hint.get has `%s` after %s'):format(step, label, name),
      found,
      ('expected %q at line %d (0-based) byte %d; got %s'):format(label, spot.line, spot.byte, inspect(seen))
    )
  end
  expect_builtin_hint('open', 'x = torch.randn(8, 128)', 'x', ': [8, 128]')
  expect_builtin_hint('open', 'y = x @ w', 'y', ': [8, 10]')

  -- 7. Hover on a tensor name.
  local function hover_at(anchor, offset)
    local line = line_of(anchor)
    local text = vim.api.nvim_buf_get_lines(buf, line, line + 1, false)[1]
    local byte = text:find(anchor, 1, true) - 1 + (offset or 0)
    vim.api.nvim_win_set_cursor(0, { line + 1, byte })
    local params = vim.lsp.util.make_position_params(0, enc)
    local response, err = client:request_sync('textDocument/hover', params, 2000, buf)
    if not response then
      return nil, 'no response: ' .. tostring(err)
    end
    if response.err then
      return nil, 'error: ' .. inspect(response.err)
    end
    return response.result and hover_text(response.result.contents) or '', params
  end
  local function expect_hover(step, anchor, offset, shape)
    local text, params
    poll(function()
      text, params = hover_at(anchor, offset)
      return text and text:find(shape, 1, true)
    end)
    return check(
      ('%s: hover on `%s` shows %s'):format(step, anchor:sub(offset + 1, offset + 1), shape),
      text and text:find(shape, 1, true),
      ('at %s; got %s'):format(inspect(type(params) == 'table' and params.position or nil), inspect(text or params))
    )
  end
  expect_hover('open', 'y = x @ w', 0, '[8, 10]')
  -- Between names: the expressions `x` and `w` of the matmul.
  expect_hover('open', 'x @ w', 0, '[8, 128]')
  expect_hover('open', 'x @ w', 4, '[128, 10]')
  -- `x` sits after the emoji, so this position is only right if both sides
  -- count the emoji the same way (2 UTF-16 units, 4 bytes, 1 code point).
  expect_hover('open', 'x = torch.randn(8, 128)', 0, '[8, 128]')

  -- 8. The toggle command of the Lua module, off and on again.
  vim.cmd('ShapelsToggleHints')
  check(':ShapelsToggleHints turns hints off', vim.lsp.inlay_hint.is_enabled({ bufnr = buf }) == false,
    'is_enabled = ' .. tostring(vim.lsp.inlay_hint.is_enabled({ bufnr = buf })))
  vim.cmd('ShapelsToggleHints')
  check(':ShapelsToggleHints turns hints back on', vim.lsp.inlay_hint.is_enabled({ bufnr = buf }) == true,
    'is_enabled = ' .. tostring(vim.lsp.inlay_hint.is_enabled({ bufnr = buf })))
  expect_builtin_hint('toggled back on', 'x = torch.randn(8, 128)', 'x', ': [8, 128]')

  -- 9. Edits. Neovim sends each as an incremental change in the negotiated
  --    encoding; the server must apply it to its copy and re-analyse.
  --
  -- 9a. Insert text holding another emoji before `x`, on the line that
  --     already has one: x's hint must move right by the inserted width.
  local before = hint_spot('x = torch.randn(8, 128)', 'x')
  local line1 = vim.api.nvim_buf_get_lines(buf, before.line, before.line + 1, false)[1]
  local x_col = line1:find('x = torch.randn', 1, true) - 1
  vim.api.nvim_buf_set_text(buf, before.line, x_col, before.line, x_col, { 'z = "🚀"; ' })
  local after = hint_spot('x = torch.randn(8, 128)', 'x')
  report.observed.edit_insert = { line = vim.api.nvim_buf_get_lines(buf, after.line, after.line + 1, false)[1], before = before, after = after }
  local edited = expect_raw_hints('after insert before x', {
    { 'x = torch.randn(8, 128)', 'x', ': [8, 128]' },
    { 'y = x @ w', 'y', ': [8, 10]' },
  })
  if edited then
    local stale = find_hint(edited, before, ': [8, 128]')
    check('after insert before x: no hint left at the old column', stale == nil, inspect(stale))
  end
  expect_builtin_hint('after insert before x', 'x = torch.randn(8, 128)', 'x', ': [8, 128]')
  expect_hover('after insert before x', 'x = torch.randn(8, 128)', 0, '[8, 128]')

  -- 9b. Replace the first emoji (a surrogate pair in UTF-16) with two ASCII
  --     letters: a change whose range ends in the middle of what a byte- or
  --     code-point-counting server would see.
  local line_now = vim.api.nvim_buf_get_lines(buf, after.line, after.line + 1, false)[1]
  local party = line_now:find('🎉', 1, true) - 1
  vim.api.nvim_buf_set_text(buf, after.line, party, after.line, party + #'🎉', { 'ab' })
  expect_raw_hints('after replacing the emoji', {
    { 'x = torch.randn(8, 128)', 'x', ': [8, 128]' },
  })

  -- 9c. A new first line: every hint and the error move down one line.
  vim.api.nvim_buf_set_lines(buf, 0, 0, false, { '# a line added by the test' })
  expect_raw_hints('after adding a line', {
    { 'x = torch.randn(8, 128)', 'x', ': [8, 128]' },
    { 'y = x @ w', 'y', ': [8, 10]' },
  })
  local moved_to = line_of('bad = x @')
  local moved = poll(function()
    local d = matmul_diagnostic()
    return d and d.lnum == moved_to and d
  end)
  check(
    'after adding a line: matmul-shape error moved with its line',
    moved ~= nil,
    ('expected 0-based line %d; got %s'):format(moved_to, inspect(vim.diagnostic.get(buf)))
  )

  -- 9d. Fix the bad matmul: the error must go away.
  local fix_line = line_of('bad = x @ torch.randn(5, 3)')
  local fix_text = vim.api.nvim_buf_get_lines(buf, fix_line, fix_line + 1, false)[1]
  local five = fix_text:find('randn(5, 3)', 1, true) - 1 + #'randn('
  vim.api.nvim_buf_set_text(buf, fix_line, five, fix_line, five + #'5, 3', { '128, 3' })
  local cleared = poll(function()
    return matmul_diagnostic() == nil
  end)
  -- Only meaningful if there was an error to fix: a server that never
  -- reported it must not pass this check by saying nothing.
  check(
    'after fixing the matmul: the error is gone',
    moved ~= nil and cleared,
    moved and inspect(vim.diagnostic.get(buf)) or 'there was no matmul-shape error before the fix'
  )
  expect_raw_hints('after fixing the matmul', {
    { 'bad = x @', 'bad', ': [8, 3]' },
  })

  -- 10. Settings changed while running, as `vim.lsp.config` users do with
  --     `client.settings` + didChangeConfiguration: `detail = "full"` adds
  --     dtype and device to every hint.
  client.settings = vim.tbl_deep_extend('force', client.settings or {}, {
    shapels = { inlayHints = { detail = 'full' } },
  })
  client:notify('workspace/didChangeConfiguration', { settings = client.settings })
  expect_raw_hints('after detail = "full"', {
    { 'x = torch.randn(8, 128)', 'x', ': [8, 128] float32 cpu' },
  })

  -- 10b. Hint settings (issue 18, item 4): a repeat of a name's shape is
  --      hidden, long hints are abbreviated (the tooltip keeps the shape),
  --      and `show = "parameters"` leaves only the parameters' hints.
  local last_line = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, last_line, last_line, false, {
    'def scale(t, k: int):',
    '    t = t * k',
    '    return t',
    'twice = scale(x, 2)',
    'x = torch.relu(x)',
  })
  local function settings(hints)
    client.settings = vim.tbl_deep_extend('force', client.settings or {}, { shapels = { inlayHints = hints } })
    client:notify('workspace/didChangeConfiguration', { settings = client.settings })
  end
  settings({ detail = 'shape', hideRepeats = true })
  expect_raw_hints('hideRepeats = true', {
    { 't, k: int', 't', ': [8, 128]' },
    { 'twice = scale', 'twice', ': [8, 128]' },
  })
  local function hint_at(anchor, name)
    local spot = hint_spot(anchor, name)
    for _, h in ipairs(raw_hints() or {}) do
      if h.line == spot.line and h.character == spot.character then
        return h
      end
    end
  end
  check('hideRepeats = true: no hint on `x = torch.relu(x)`', hint_at('x = torch.relu(x)', 'x') == nil,
    inspect(raw_hints()))
  check('hideRepeats = true: no hint on `t = t * k`', hint_at('    t = t * k', '    t') == nil, inspect(raw_hints()))
  settings({ hideRepeats = false, maxLength = 8 })
  expect_raw_hints('maxLength = 8', {
    { 'twice = scale', 'twice', ': [8, …]' },
    { 'x = torch.relu(x)', 'x', ': [8, …]' },
  })
  settings({ maxLength = 0, show = 'parameters' })
  expect_raw_hints('show = "parameters"', {
    { 't, k: int', 't', ': [8, 128]' },
  })
  check('show = "parameters": no hint on `twice`', hint_at('twice = scale', 'twice') == nil, inspect(raw_hints()))
  settings({ show = 'all' })

  -- 10c. Quick fixes (issue 18, item 2, and issue 17's stale comments),
  --      applied the way Neovim applies a code action's WorkspaceEdit: each
  --      diagnostic goes away.
  check('server offers quick fixes', vim.tbl_get(caps, 'codeActionProvider', 'codeActionKinds', 1) == 'quickfix',
    inspect(caps.codeActionProvider))
  last_line = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, last_line, last_line, false, {
    'lin = torch.nn.Linear(64, 8)',
    'lo = lin(torch.randn(2, 32))',
    'a3 = torch.randn(4, 8, 16)',
    'v3 = a3.transpose(1, 2).view(4, 128)',
    'lg = torch.randn(4, 16, 100)',
    'tg = torch.randint(0, 100, (4, 16))',
    'ce = torch.nn.functional.cross_entropy(lg, tg)',
    'sq = torch.randn(4, 5).unsqueeze(0)  # B x T',
  })
  local function diagnostic_of(code)
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == code then
        return d
      end
    end
  end
  local function apply_quick_fix(code, expected_text)
    local d = poll(function()
      return diagnostic_of(code)
    end)
    if not check(('%s: diagnosed before the fix'):format(code), d ~= nil, inspect(vim.diagnostic.get(buf))) then
      return
    end
    local lsp_diagnostic = vim.tbl_get(d, 'user_data', 'lsp')
    local response = client:request_sync('textDocument/codeAction', {
      textDocument = { uri = uri },
      range = lsp_diagnostic.range,
      context = { diagnostics = { lsp_diagnostic }, only = { 'quickfix' } },
    }, 5000, buf)
    local actions = response and response.result or {}
    report.observed['code_actions_' .. code] = actions
    local preferred
    for _, a in ipairs(actions) do
      if a.isPreferred then
        preferred = a
      end
    end
    if not check(('%s: a preferred quick fix is offered'):format(code), preferred ~= nil, inspect(response)) then
      return
    end
    vim.lsp.util.apply_workspace_edit(preferred.edit, client.offset_encoding)
    local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
    check(('%s: the fix edits the buffer'):format(code), text:find(expected_text, 1, true) ~= nil, text)
    local gone = poll(function()
      return diagnostic_of(code) == nil
    end)
    check(('%s: the diagnostic is gone after the fix'):format(code), gone, inspect(vim.diagnostic.get(buf)))
  end
  apply_quick_fix('linear-shape', 'lin = torch.nn.Linear(32, 8)')
  apply_quick_fix('view-stride', 'v3 = a3.transpose(1, 2).reshape(4, 128)')
  apply_quick_fix('loss-shape', 'cross_entropy(lg.view(-1, 100), tg.view(-1))')
  -- Issue 17: a stale shape comment is rewritten in its own notation.
  apply_quick_fix('shape-comment', 'sq = torch.randn(4, 5).unsqueeze(0)  # 1 x 4 x 5')

  -- 11. `:checkhealth shapels` finds the binary and reports no error. It
  --     opens its own tab, which is closed again afterwards.
  vim.cmd('checkhealth shapels')
  local health_buf = vim.api.nvim_get_current_buf()
  local health = ''
  -- The report is filled in after the command returns.
  poll(function()
    health = table.concat(vim.api.nvim_buf_get_lines(health_buf, 0, -1, false), '\n')
    return health:find('client(s) running', 1, true)
  end, 3000)
  check(
    ':checkhealth shapels finds the server and reports no error',
    health:find('` found', 1, true) ~= nil and health:find('ERROR', 1, true) == nil,
    health
  )
  if mode == 'venv' then
    check(
      ":checkhealth shapels names the project's .venv binary",
      health:find("/.venv/bin/shapels` found (the project's virtual environment)", 1, true) ~= nil,
      health
    )
  end
  vim.cmd('tabclose')

  -- 12. A clean shutdown: the server answers `shutdown` and exits on `exit`.
  client:stop()
  local stopped = poll(function()
    return client:is_stopped()
  end, 5000)
  check('server shuts down when asked', stopped, 'client still running 5 s after stop()')
  if not stopped then
    client:stop(true)
  end
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  check('the test script ran to the end', false, tostring(err))
end
report.observed.lsp_log_tail = (function()
  -- The last lines of Neovim's LSP log carry the server's stderr and any
  -- RPC error, which is usually the explanation of a failed check.
  local f = io.open(report.log, 'r')
  if not f then
    return nil
  end
  local lines = {}
  for l in f:lines() do
    table.insert(lines, l)
    if #lines > 40 then
      table.remove(lines, 1)
    end
  end
  f:close()
  return lines
end)()
local all_ok = write_report()
vim.cmd(all_ok and 'qall!' or 'cquit! 1')
