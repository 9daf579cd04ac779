"""The user's configuration: `paths` finds the file (cheap), `settings` applies precedence, `schema` validates."""
