"""Changing what memory holds: forget, update, supersede, undo, each a visible edit of a note."""
