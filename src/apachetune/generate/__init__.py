"""Writing tuned configuration: new files and minimal in-place edits, always safely."""
