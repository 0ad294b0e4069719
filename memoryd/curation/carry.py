"""What an agent's index folder holds beside the index that the index cannot be rebuilt from: the forget record
(what stays out of it) and the change log (what undo puts back). Moving the index elsewhere (`store migrate` into a
file in another folder) carries them along, or a forgotten transcript line would come back in the new index."""

from __future__ import annotations

from memoryd.durable import fsync_dir, private_folder, replace_privately
from memoryd.settings import AgentConfig
from memoryd.sources.forgotten import ForgetRecord, record_path

CHANGES = "changes"


def carry(source: AgentConfig, target: AgentConfig) -> None:
    """Bring the source agent's forget record and change log to where the target's index looks for them (merged
    with what is there already); nothing to do when both look in one folder."""
    here, there = record_path(source), record_path(target)
    if here.parent.resolve() == there.parent.resolve() or not here.parent.is_dir():
        return
    if here.exists():
        ForgetRecord(there).merge(here)
    changes = here.parent / CHANGES
    if changes.is_dir():
        into = there.parent / CHANGES
        private_folder(into)
        for old in sorted(changes.glob("*.json")):
            if not (into / old.name).exists():
                replace_privately(into / old.name, old.read_bytes())
        fsync_dir(into)
