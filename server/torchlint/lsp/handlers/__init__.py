"""The LSP methods the server answers: plain functions of the Session and the
request's params, one module per feature group (registered by lsp.server.create)."""
