"""From sources to the store: syncs (whole or of changed paths), their batches and windows, the change feed that
debounces watcher events, and the embedding lane that adds vectors in the background."""
