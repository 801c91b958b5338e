"""Web pages clipped into the vault by the running system (issue #36): fetched behind the public-address guard,
the main text as Markdown with its images beside it, written under ``obsirag/clips/``. Uses vault and config."""
