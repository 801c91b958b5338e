"""Connected sources beside the vault (issue #37): mailboxes over IMAP, calendars over CalDAV or an ICS URL.

Read-only: a sync reads its server and writes what it read as items (``services.vault.items``) under
``<data>/connectors/items/``, never into the vault and never back to the server; the indexer indexes
them like notes. ``registry`` keeps the settings, secrets and status, ``mail`` and ``calendar`` read the
servers, ``mirror`` writes the items, ``sync`` runs one connector and says what failed in French.
"""
