"""The fleet: many projects, local and over SSH, summarised into rows sorted by what needs the operator."""
