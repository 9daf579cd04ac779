"""The user's configuration file: `paths` finds it (cheap), `schema` validates it and applies precedence."""
