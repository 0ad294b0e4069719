"""What the daemon and its clients share: the wire's message kinds and limits, and where things live on disk.

Imported by both sides and importing nothing else of memoryd, so a client stays light."""
