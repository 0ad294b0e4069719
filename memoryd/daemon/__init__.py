"""The daemon: its server and RPC methods, the manager of agents, each agent's job scheduler, the watchers, and the
`memoryd` command line (run, doctor, units, store migrate)."""
