"""From sources to the store: syncs (whole or of changed paths), their batches and windows, and the change feed
that debounces watcher events. The daemon's jobs (memoryd.daemon.jobs) run the syncs and add vectors later."""
