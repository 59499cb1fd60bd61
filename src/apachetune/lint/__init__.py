"""The linter: rule metadata (rules/*.yaml) + one small check module per family."""
