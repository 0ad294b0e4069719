"""Where an agent's index lives: the store interface and its kinds (sqlite/, postgres/), each behind a backend
object (memoryd.store.backend), the vectors search reads and the errors a store raises."""

KINDS = ("sqlite", "postgresql")
