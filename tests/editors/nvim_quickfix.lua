-- Neovim 0.7+ as an independent LSP client of `torchlint server` (run headless by
-- test_neovim.py): open a buggy file, wait for diagnostics, apply the preferred
-- quick fix through the built-in client, wait for the diagnostics to clear, and
-- write what happened to $OUT as JSON.
local result = { steps = {} }

local function finish()
  local fh = io.open(os.getenv("OUT"), "w")
  fh:write(vim.fn.json_encode(result))
  fh:close()
  vim.cmd("qa!")
end

local function simple(diags)
  return vim.tbl_map(function(d)
    return { code = d.code, lnum = d.lnum, col = d.col, source = d.source, message = d.message }
  end, diags)
end

local ok, err = pcall(function()
  local file = os.getenv("FIXTURE")
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = "torchlint",
    cmd = vim.fn.json_decode(os.getenv("TORCHLINT_CMD")),
    root_dir = vim.fn.fnamemodify(file, ":p:h"),
  })
  assert(client_id, "the client did not start")
  vim.lsp.buf_attach_client(bufnr, client_id)

  assert(vim.wait(60000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50), "no diagnostics arrived")
  result.initial = simple(vim.diagnostic.get(bufnr))
  table.insert(result.steps, "diagnostics")

  local diag = vim.diagnostic.get(bufnr)[1]
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = {
      start = { line = diag.lnum, character = diag.col },
      ["end"] = { line = diag.end_lnum, character = diag.end_col },
    },
    context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, diag.lnum) },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, 30000)
  local chosen
  result.titles = {}
  for _, response in pairs(responses or {}) do
    for _, action in ipairs(response.result or {}) do
      table.insert(result.titles, action.title)
      if action.isPreferred and not chosen then chosen = action end
    end
  end
  assert(chosen, "no preferred quick fix among " .. vim.inspect(result.titles))
  local client = vim.lsp.get_client_by_id(client_id)
  vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding)
  table.insert(result.steps, "applied")

  assert(vim.wait(60000, function() return #vim.diagnostic.get(bufnr) == 0 end, 50), "diagnostics did not clear")
  result.after = simple(vim.diagnostic.get(bufnr))
  result.text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n"
  table.insert(result.steps, "cleared")
  vim.lsp.stop_client(client_id)
end)
if not ok then result.error = tostring(err) end
finish()
